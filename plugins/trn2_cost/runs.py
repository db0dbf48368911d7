"""The snapshot caches: what ``estimate`` keeps of each program it priced (``Run``),
by program identity while the program lives (``Runs``), so a program derived from it
is estimated from its parent's run."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from nkigym_graph.cost import (
    CostReport,
    Task,
)
from nkigym_graph.ir.program import Program

from .price_table import PriceTable
from .tasks import Layout


@dataclass
class Run:
    """What ``estimate`` keeps of a program, for the programs derived from it."""

    program: weakref.ref[Program]
    table: PriceTable
    signature: tuple[str, ...]
    rows: np.ndarray
    ends: np.ndarray | None
    """``ends_by_statement_of`` (None: derived programs are estimated in full)."""
    inserted: dict[int, list[Task]] | None
    """The evictions before each statement (``evictions_of``), of a run estimated in
    full (a derived run keeps them in ``layout``)."""
    report: CostReport
    layout: Layout | None = None
    """The schedule's tasks with their finish times and critical predecessors (laid out
    when a program is first derived from this one, if the run did not lay them out)."""


_RUN_BUDGET = 1_000_000
"""Statements the kept runs of a cost model may hold in all."""


class Runs:
    """The runs of recently estimated programs, by identity (a ``Program`` hashes by its
    canonical hash, so equal programs would share a ``WeakKeyDictionary`` entry): each is
    dropped when its program dies, and the least recently used ones when they hold more
    than ``budget`` statements."""

    def __init__(self, budget: int = _RUN_BUDGET) -> None:
        self.budget = budget
        self.held = 0
        self.by_id: OrderedDict[int, Run] = OrderedDict()
        self.lock = threading.RLock()  # a program may die (and be forgotten) in any thread

    def get(self, program: Program) -> Run | None:
        """The run of ``program`` (marked recently used), if kept."""
        key = id(program)
        with self.lock:
            run = self.by_id.get(key)
            if run is None or run.program() is not program:
                return None
            self.by_id.move_to_end(key)
            return run

    def put(self, program: Program, run: Run) -> None:
        """Keep ``run``, the run of ``program``."""
        key = id(program)
        with self.lock:
            self.drop(key)
            self.by_id[key] = run
            self.held += len(run.rows)
            while self.held > self.budget and len(self.by_id) > 1:
                _, oldest = self.by_id.popitem(last=False)
                self.held -= len(oldest.rows)
        weakref.finalize(program, _forget, weakref.ref(self), key).atexit = False

    def drop(self, key: int) -> None:
        """Forget the run of the program ``key`` (its id)."""
        with self.lock:
            run = self.by_id.pop(key, None)
            if run is not None:
                self.held -= len(run.rows)

    def __len__(self) -> int:
        return len(self.by_id)


def _forget(runs: weakref.ref[Runs], key: int) -> None:
    """A program died: its run goes (the finalizer holds its ``Runs`` weakly, so a
    dropped cost model does not live on with the programs it estimated)."""
    found = runs()
    if found is not None:
        found.drop(key)
