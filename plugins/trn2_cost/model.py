"""``Trn2CostModel``: the analytic Trainium2 cost model (see the package docstring),
estimating a program in full or from its parent's run."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Collection, Mapping, Sequence, Set
from typing import Any

import numpy as np

from nkigym_graph.cost import CostReport, Task
from nkigym_graph.cost.kernel_timing import kernel_profile, scheduled_report
from nkigym_graph.cost.schedule import node_schedule
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.variables import INTERMEDIATE
from nkigym_graph.nki_sim.timing.result import Profile
from nkigym_graph.scheduling.plan import KernelPlan
from nkigym_graph_plugins.nki_backend.errors import NkiEmitError
from nkigym_graph_plugins.nki_backend.timing import planned_profile

from .lifetimes import (
    Placement,
    Tiles,
    derived_ends,
    ends_by_statement_of,
    evictions_of,
    last_uses_of,
)
from .price_table import PriceMemo, PriceTable, survey
from .pricing import Pricing, bandwidth, edges_of, facts_of, peak_flops
from .runs import Run, Runs
from .tasks import Added, Layout, Spec, Timed, laid_out
from .tasks import derive as derive_layout
from .tasks import schedule as schedule_layout

ANCESTORS = 2
"""Ancestors without a kept run ``estimate`` estimates first, from the kept run of the
one above them (a derived estimate costs a fraction of a full one)."""


def emitted_timing(plan: KernelPlan) -> Profile:
    """The profile of the kernel the NKI backend emits for ``plan`` (its engine policy
    included, ``nki_backend.timing``), so a scheduled program's modeled figure is the
    profile of its kernel; where the backend cannot emit the plan, the plan's own
    instructions timed on the default engines (``cost.kernel_timing``)."""
    try:
        return planned_profile(plan)
    except NkiEmitError:
        return kernel_profile(plan)


class Trn2CostModel:
    """The analytic Trainium2 cost model (see the module docstring: a program derived
    from one it estimated is estimated from the parent's ``Run``)."""

    name = "trn2"
    families = ("neuron",)

    def __init__(self) -> None:
        self._memo = PriceMemo()
        self._runs = Runs()
        self._lock = threading.Lock()  # one estimate at a time: the caches are shared

    def estimate(self, program: Program) -> CostReport:
        if program.schedule is not None:
            unscheduled = program.with_schedule(None)
            return scheduled_report(program, self.name, lambda: self.estimate(unscheduled), emitted_timing)
        with self._lock:
            run = self._runs.get(program)
            if run is None:
                run = self._derived(program, ANCESTORS) or self._full(program)
                self._runs.put(program, run)
            return run.report

    def _full(self, program: Program) -> Run:
        facts = facts_of(program)
        found = survey(program)
        table = self._memo.table(found.signature)
        rows = table.rows(program)
        columns = table.columns
        starts = np.array([program.position(node) for node in found.starts], dtype=np.int64)
        ends = last_uses_of(program, found.tiles)
        inserted = evictions_of(program, rows, table, np.arange(len(rows)), {})
        schedule = node_schedule(
            columns.queue[rows].tolist(),
            table.engines,
            columns.seconds[rows].tolist(),
            *edges_of(program),
            inserted,
            nodes=program.ids,
        )
        tiles = Tiles.placed(starts, ends, rows, table)
        report = self._report(program, facts, Timed(schedule.seconds, schedule.busy), rows, tiles, table)
        ends_by_statement = ends_by_statement_of(len(rows), starts, ends)
        return Run(weakref.ref(program), table, found.signature, rows, ends_by_statement, inserted, report)

    def _kept_or_derived(self, program: Program, ancestors: int) -> Run | None:
        """The kept run of ``program``, or one derived (and kept) from its parent's, which
        may be derived the same way, ``ancestors`` levels up at most (None: neither)."""
        run = self._runs.get(program)
        if run is None and ancestors > 0:
            run = self._derived(program, ancestors - 1)
            if run is not None:
                self._runs.put(program, run)
        return run

    def _derived(self, program: Program, ancestors: int = 0) -> Run | None:
        """The run of ``program`` from its parent's (None: estimate it in full); a parent
        without a kept run (e.g. a program rebuilt from its own parent) is estimated from
        its ancestors' first (``ANCESTORS``). The
        statements that are not dirty are the parent's (same ids), with the same edges
        and tiles (the derivation marks every statement whose statement, edges or
        on-chip variables changed), so they keep their prices, evictions and tasks when
        the dirty statements keep their context (``PriceTable.derived_rows``) and the
        touched variables their dtypes and placement; else the statements from the
        first change on are looked up by node key. The run's price rows and tile
        lifetimes are per position in program order; its task layout is the parent's
        with the rewritten statements' tasks overwritten (``tasks.derive``), solved from
        the parent's critical predecessors (``tasks.schedule``)."""
        derivation = program.derivation
        parent = derivation.parent() if derivation is not None else None
        before = self._kept_or_derived(parent, ancestors) if parent is not None else None
        if derivation is None or parent is None or before is None or before.ends is None:
            return None
        touched = derivation.touched
        if not _same_hbm(parent, program, touched):
            return None
        table = self._memo.table(before.signature)
        if table is not before.table:  # the price memo was emptied
            return None
        gone = sorted(parent.position(node) for node in derivation.removed)
        ends = derived_ends(before.ends, parent, program, derivation, gone)
        if ends is None:
            return None
        n = len(program.statements)
        dirty = sorted(program.position(node) for node in derivation.dirty)
        start = min(dirty[0] if dirty else n, gone[0] if gone else n)
        rows = (
            table.derived_rows(program, parent, before.rows, gone, dirty)
            if _same_dtypes(parent, program, touched)
            else None
        )
        if rows is not None:
            looked_at = np.array(dirty, dtype=np.int64)
            rewritten: Sequence[int] = [program.ids[at] for at in dirty]
        else:
            rows = table.rows(program, start, before.rows)
            looked_at = np.arange(start, n)
            rewritten = program.ids[start:]
        if not _same_placement(parent, before.rows, program, rows, table, touched):
            return None
        inserted = evictions_of(program, rows, table, looked_at, {})  # of the rewritten statements
        if before.layout is None:
            assert before.inserted is not None, "a derived run keeps its evictions in its layout"
            before.layout = _laid_out(parent, before.rows, before.inserted, table)
        specs = _specs(program, rows, table, inserted, rewritten, looked_at)
        layout, timed = schedule_layout(
            derive_layout(before.layout, specs, derivation.removed, program.order_key), table.engines
        )
        starts = np.flatnonzero(ends >= 0)
        tiles = Tiles.placed(starts, ends[starts], rows, table)
        report = self._report(program, facts_of(program), timed, rows, tiles, table)
        return Run(weakref.ref(program), table, before.signature, rows, ends, None, report, layout)

    def _report(
        self,
        program: Program,
        facts: Mapping[str, Any],
        schedule: Timed,
        rows: np.ndarray,
        tiles: Tiles,
        table: PriceTable,
    ) -> CostReport:
        columns = table.columns
        uses = np.bincount(rows, minlength=len(table.prices))
        dtypes = {table.prices[row].peak_dtype for row in np.flatnonzero(uses).tolist()}
        peak_dtypes = [d for d in dtypes if d is not None]
        peak = max((peak_flops(facts, d) for d in peak_dtypes), default=peak_flops(facts, "bfloat16"))
        target = program.target
        reasons = []
        used: dict[str, int] = {}
        buffers = table.buffers
        peaks = tiles.peaks(len(buffers))
        for buffer, capacity in (
            ("sbuf", target.sbuf_bytes_per_partition),
            ("psum", target.psum_bytes_per_partition),
        ):
            peak_of = peaks[buffers.index(buffer)] if buffer in buffers else None
            if peak_of is None:
                continue
            used[buffer], node = peak_of
            if used[buffer] > capacity:
                live = tiles.live_at(buffers.index(buffer), node)
                reasons.append(
                    f"peak {buffer.upper()} {used[buffer] / 1024:.1f} KiB per partition at statement "
                    f"{node} ({live} live tiles) exceeds {capacity / 1024:.1f} KiB on {target.name}"
                )
        return CostReport(
            model=self.name,
            target=target.name,
            seconds=schedule.seconds,
            engine_seconds=schedule.busy,
            bytes_moved=int(uses @ columns.bytes),
            flops=int(uses @ columns.flops),
            peak_flops=peak,
            knee=peak / bandwidth(facts),
            statements=len(program.statements),
            peak_sbuf_bytes=used.get("sbuf", 0),
            peak_psum_bytes=used.get("psum", 0),
            sbuf_capacity=target.sbuf_bytes_per_partition,
            psum_capacity=target.psum_bytes_per_partition,
            feasible=not reasons,
            reason="; ".join(reasons),
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (Trn2CostModel, ())  # sent to worker processes without its caches

    def __repr__(self) -> str:
        return "<cost model trn2>"


def _same_hbm(parent: Program, program: Program, touched: Set[str]) -> bool:
    """Whether the touched variables that live in HBM keep their kind and dtype (so the
    programs have one ``Survey.signature``)."""
    for var in touched:
        was, now = parent.variables.get(var), program.variables.get(var)
        in_hbm = [info.kind != INTERMEDIATE for info in (was, now) if info is not None]
        if any(in_hbm) and (was is None or now is None or (was.kind, was.dtype) != (now.kind, now.dtype)):
            return False
    return True


def _same_dtypes(parent: Program, program: Program, touched: Set[str]) -> bool:
    """Whether the touched tiles keep their dtypes: then so does every other tile, whose
    dtype follows unchanged statements up to a touched variable or an HBM tensor."""
    was, now = Pricing(parent), Pricing(program)
    for var in touched:
        old, new = parent.variables.get(var), program.variables.get(var)
        both = old is not None and new is not None and old.kind == INTERMEDIATE == new.kind
        if both and was.dtype(var) != now.dtype(var):
            return False
    return True


def _same_placement(
    parent: Program,
    parent_rows: np.ndarray,
    program: Program,
    rows: np.ndarray,
    table: PriceTable,
    touched: Set[str],
) -> bool:
    """Whether the touched HBM tensors stay where they were (a tile read before the first
    change is defined before it; an HBM tensor's first write need not be)."""
    was, now = Placement(parent, parent_rows, table), Placement(program, rows, table)
    return all(
        was.in_psum(var) == now.in_psum(var)
        for var in touched
        if (info := program.variables.get(var)) is not None and info.kind != INTERMEDIATE
    )


def _laid_out(
    program: Program, rows: np.ndarray, inserted: Mapping[int, Sequence[Task]], table: PriceTable
) -> Layout:
    """The solved task layout of a program estimated in full (its tasks gathered into
    flat lists, not one ``Spec`` per statement)."""
    data, order = program.incoming
    ids = program.ids
    columns = table.columns
    sources = [[src for src, _ in data[node]] + [src for src, _ in order[node]] for node in ids]
    owners, tasks = [], []
    for statement, node in enumerate(ids):
        for task in inserted.get(node, ()):
            owners.append(statement)
            tasks.append(task)
    queue_by_engine = {engine: table.queue_of(engine) for engine in {task.engine for task in tasks}}
    waits = [*sources, *(task.deps for task in tasks)]
    lengths = np.fromiter(map(len, waits), dtype=np.int64, count=len(waits))
    added = Added(
        np.fromiter(ids, dtype=np.int64, count=len(ids)),
        np.concatenate((columns.queue[rows], [queue_by_engine[task.engine] for task in tasks])).astype(
            np.int64
        ),
        np.concatenate((columns.seconds[rows], [task.seconds for task in tasks])).astype(np.float64),
        np.array(owners, dtype=np.int64),
        lengths,
        np.fromiter((node for found in waits for node in found), dtype=np.int64, count=int(lengths.sum())),
    )
    layout, _ = schedule_layout(laid_out(added, program.order_key), table.engines)
    return layout


def _specs(
    program: Program,
    rows: np.ndarray,
    table: PriceTable,
    inserted: Mapping[int, Sequence[Task]],
    nodes: Sequence[int] | Collection[int],
    positions: np.ndarray,
) -> dict[int, Spec]:
    """The tasks of the statements ``nodes`` (ids; at ``positions``, in the same order)."""
    data, order = program.incoming
    columns, queue_of = table.columns, table.queue_of
    at = rows[positions]
    queues, costs = columns.queue[at].tolist(), columns.seconds[at].tolist()
    queue_by_engine = {
        engine: queue_of(engine) for engine in {t.engine for ts in inserted.values() for t in ts}
    }
    specs = {}
    for node, queue, seconds in zip(nodes, queues, costs, strict=True):
        sources = [src for src, _ in data[node]]
        after = order[node]
        if after:
            sources += [src for src, _ in after]
        found = inserted.get(node)
        before = tuple([(queue_by_engine[t.engine], t.seconds, t.deps) for t in found]) if found else ()
        specs[node] = Spec(
            queue, seconds, tuple(dict.fromkeys(sources)) if len(sources) > 1 else tuple(sources), before
        )
    return specs
