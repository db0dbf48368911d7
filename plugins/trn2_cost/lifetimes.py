"""Tile lifetimes (``Tiles``: peak live SBUF and PSUM bytes) and PSUM placement and
evictions of a program, in full or updated from its parent's along a derivation."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from nkigym_graph.cost import (
    Task,
)
from nkigym_graph.cost.liveness import peak_live_by
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.variables import INTERMEDIATE, PARAM
from nkigym_graph.nki_sim.timing.constants import timing_constants

if TYPE_CHECKING:
    from nkigym_graph.ir.derivation import Derivation

from .price_table import PriceTable
from .pricing import DMA_QUEUES


class Tiles(NamedTuple):
    """A program's on-chip tiles, as columns."""

    starts: np.ndarray
    """Defining statements."""
    ends: np.ndarray
    """Last uses (reads or writes)."""
    sizes: np.ndarray
    """Bytes per partition."""
    buffers: np.ndarray
    """Index of the buffer (``PriceTable.buffers``)."""

    @classmethod
    def placed(cls, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray, table: PriceTable) -> Tiles:
        """The tiles living from ``starts`` to ``ends``, sized and placed by their defining statements."""
        defining = rows[starts]
        columns = table.columns
        return cls(starts, ends, columns.tile_bytes[defining], columns.buffer[defining])

    def peaks(self, buffers: int) -> list[tuple[int, int] | None]:
        """Per buffer index, the peak live bytes per partition and the first statement
        where it occurs (None if no tile lives there)."""
        return peak_live_by(self.starts, self.ends, self.sizes, self.buffers, buffers)

    def live_at(self, buffer: int, node: int) -> int:
        """How many tiles of ``buffer`` are live at statement ``node``."""
        held = self.buffers == buffer
        return int(np.count_nonzero((self.starts[held] <= node) & (node <= self.ends[held])))


def last_uses_of(program: Program, names: list[str]) -> np.ndarray:
    """The last statement mentioning each of ``names``."""
    last: dict[str, int] = {}
    for node, (_, operands, _, _) in enumerate(program.statements):
        for var, _ in operands:
            last[var] = node
    return np.fromiter(map(last.__getitem__, names), dtype=np.int64, count=len(names))


def ends_by_statement_of(statements: int, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """Per statement, the last use of the tile it defines (-1: none); None if a statement
    defines two tiles (an op writing two operands)."""
    out = np.full(statements, -1, dtype=np.int64)
    out[starts] = ends
    return out if np.count_nonzero(out >= 0) == len(starts) else None


def derived_ends(
    ends: np.ndarray, parent: Program, program: Program, derivation: Derivation, gone: list[int]
) -> np.ndarray | None:
    """``ends_by_statement_of`` of ``program`` from its parent's (``ends``; both per
    position, ``gone``: the ascending parent positions of the removed statements): a
    tile no edit touched keeps its statements, so its definition and last use are the
    parent's, at their positions here (derivations keep the order, so a position moves
    back by the removed statements before it); a touched tile is mentioned only by dirty
    statements (the derivation marks every statement mentioning a touched on-chip
    variable), so its last use is the last of those. None when that does not hold."""
    if gone:
        dropped = np.array(gone, dtype=np.int64)
        out = np.delete(ends, dropped)
        held = out >= 0
        kept = out[held]
        out[held] = kept - np.searchsorted(dropped, kept)  # a removed last use is a touched tile's
    else:  # nothing removed: same positions
        out = ends.copy()
    tiles: set[str] = set()
    for var in derivation.touched:
        was = parent.variables.get(var)
        if (
            was is not None
            and was.kind == INTERMEDIATE
            and was.defined_by is not None
            and was.defined_by in program
        ):
            out[program.position(was.defined_by)] = -1
        now = program.variables.get(var)
        if now is not None and now.kind == INTERMEDIATE:
            tiles.add(var)
    if not tiles:
        return out
    last: dict[str, int] = {}
    for node in derivation.dirty:
        at = program.position(node)
        for var, _ in program.statements[at].operands:
            if var in tiles and last.get(var, -1) < at:
                last[var] = at
    variables = program.variables
    for var in tiles:
        defined_by = variables[var].defined_by
        if defined_by is None:
            return None
        start = program.position(defined_by)
        if out[start] >= 0 or last.get(var, -1) < start:
            return None
        out[start] = last[var]
    return out


class Placement:
    """Which variables of a program live in PSUM: a tile where its defining statement
    puts it, an HBM tensor a fragment writes where its first write puts it (found on
    demand: only the variables read by an engine that reads SBUF only matter)."""

    def __init__(self, program: Program, rows: np.ndarray, table: PriceTable) -> None:
        self.program = program
        self.rows = rows
        self.buffer_of_row = table.columns.buffer
        self.psum = table.buffers.index("psum") if "psum" in table.buffers else -1
        self.known: dict[str, bool] = {}

    def in_psum(self, var: str) -> bool:
        """Whether ``var`` lives in PSUM."""
        found = self.known.get(var)
        if found is None:
            found = self.known[var] = self._in_psum(var)
        return found

    def _in_psum(self, var: str) -> bool:
        info = self.program.variables.get(var)
        if info is None or info.kind == PARAM or self.psum < 0:
            return False
        start = None if info.defined_by is None else self.program.position(info.defined_by)
        if start is None:
            start = next((n for n, s in enumerate(self.program.statements) if s.dst.var == var), None)
        return start is not None and int(self.buffer_of_row[self.rows[start]]) == self.psum


def evictions_of(
    program: Program, rows: np.ndarray, table: PriceTable, nodes: np.ndarray, out: dict[int, list[Task]]
) -> dict[int, list[Task]]:
    """Set in ``out`` (by statement id), per statement of ``nodes`` (positions) that has
    some, the tasks queued before it (a new list: runs share theirs): for a DMA
    transfer, its fixed latency (a task of no engine, after the transfer's inputs); for a
    statement reading PSUM tiles on an engine that reads SBUF only, the Vector Engine
    copies evicting them to SBUF."""
    placement = Placement(program, rows, table)
    known, in_psum = placement.known, placement.in_psum
    prices, statements, data, ids = table.prices, program.statements, program.incoming[0], program.ids
    latency: dict[int, list[Task]] = {}
    queues = [table.engines.index(q) for q in DMA_QUEUES if q in table.engines]
    if queues:
        fixed = float(program.target.facts["dma_dge_fixed_seconds"])
        queue = table.columns.queue[rows[nodes]]  # the columns first: they may add engines
        is_dma = np.zeros(len(table.engines), dtype=bool)
        is_dma[queues] = True
        transfers = nodes[is_dma[queue]]
        for at in transfers.tolist():
            node = ids[at]
            latency[node] = [Task("", fixed, tuple([src for src, _ in data[node]]))]
            out[node] = latency[node]
    sync = timing_constants("trn2").engine_sync_ns * 1e-9
    handed = _hand_overs(program, rows, table, nodes, sync)
    for node, task in handed.items():
        out[node] = [task]
    nodes = nodes[table.columns.evicts[rows[nodes]]]
    for at, row in zip(nodes.tolist(), rows[nodes].tolist(), strict=True):
        node = ids[at]
        operands = statements[at].operands
        tasks = latency.get(node, [])
        copies = 0.0
        for position, seconds, _ in prices[row].evictions:
            var = operands[position].var
            psum = known.get(var)
            if psum if psum is not None else in_psum(var):
                sources = tuple([src for src, use in data[node] if use.position == position])
                tasks.append(Task("vector", seconds, sources))
                copies += seconds
        if tasks and latency.get(node) and copies:
            # the transfer reads the copies: its latency runs after the Tensor Engine's
            # result reaches the Vector Engine (the semaphore hand-over) and is copied
            first = tasks[0]
            tasks[0] = Task(first.engine, first.seconds + sync + copies, first.deps)
        if tasks:
            out[node] = [handed[node], *tasks] if node in handed else tasks
    return out


COMPUTE_ENGINES = frozenset({"tensor", "vector", "scalar", "gpsimd"})
"""Engines whose instructions wait for a result of another compute engine through a
semaphore (``engine_sync_ns``); a DMA transfer's own latency covers its wait."""


def _hand_overs(
    program: Program, rows: np.ndarray, table: PriceTable, nodes: np.ndarray, sync: float
) -> dict[int, Task]:
    """Per statement of ``nodes`` (positions) on a compute engine that depends on
    statements of another compute engine (data or ordering edges: a read of their
    result, or a write over what they read), a task of no engine ``sync`` long after
    those statements: the semaphore hand-over between engines, as the profile times it
    (an instruction sees another compute engine's result ``engine_sync_ns`` after it
    ends; the engines keep working meanwhile, but an engine's queue is in order, so the
    waiting instruction holds the ones behind it)."""
    queue = table.columns.queue[rows]  # per position (the columns first: they may add engines)
    compute = np.array([engine in COMPUTE_ENGINES for engine in table.engines], dtype=bool)
    waiting = nodes[compute[queue[nodes]]]
    if not len(waiting):
        return {}
    data, order = program.incoming
    ids, position = program.ids, program.position
    found: dict[int, Task] = {}
    for at in waiting.tolist():
        node = ids[at]
        own = queue[at]
        others = []
        for src in dict.fromkeys([src for src, _ in data[node]] + [src for src, _ in order[node]]):
            theirs = queue[position(src)]
            if theirs != own and compute[theirs]:
                others.append(src)
        if others:
            found[node] = Task("", sync, tuple(others))
    return found
