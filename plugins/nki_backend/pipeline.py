"""A statement order that keeps the engines' in-order queues busy (list scheduling).

Each engine runs its instructions in the order the kernel issues them, so an
instruction waiting for its inputs holds up everything queued behind it on its engine.
In program order, attention's next row of scores waits on the Tensor Engine behind the
current row's ``P @ V``, which waits for its exponentials, so the rows run one after
another. This order follows the kernel as the timing model would (the calibrated
per-instruction times of ``nkigym_graph.nki_sim.timing``, loads and stores at the DMA
rate on their own rings) and at each step issues, of the statements whose inputs are
issued, the one that can start first (program order on a tie)::

    program order               pipelined
    s0 = q0.T @ k               s0 = q0.T @ k
    m0 = max(s0); e0 = exp(..)  s1 = q1.T @ k        # the Tensor Engine is free now
    o0 = e0.T @ v               m0 = max(s0); e0 = exp(..)
    s1 = q1.T @ k               m1 = max(s1); ...    # overlaps o0 = e0.T @ v
    ...

Tensor Engine results the kernel keeps in PSUM (``held_in_psum``: matmul accumulators)
hold their banks until their last reader is issued; other results (transposes) need a
free bank only for a moment: they are copied to SBUF at once, which the order times as a
copy on the Vector or Scalar Engine after the result. An instruction NKI lets several
engines run goes to the one where it finishes first (``engines_of``), and a result from
another engine arrives the timing model's ``engine_sync_ns`` later.

Two priorities pick among the statements that could be issued (the emitter tries both):
``start`` issues the one that can start first; ``chain`` the one, of those that can
start first, with the longest chain of work after it (its own time included), so that
a row's maxima and exponentials go ahead of the previous row's copies; it takes PSUM
for new results in program order, so that no row's scores wait on banks held by later
rows.

A load is issued no earlier than needed to keep at most ``LOAD_LOOKAHEAD_BYTES`` per
partition of loaded tiles waiting for their first reader, so the order does not pull
every load to the front. The emitter lowers with this order as well as program order
and keeps it when it fits on chip and the engine model ends it first.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from nkigym_graph.ir.dtypes import itemsize
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.slices import Slices
from nkigym_graph.ir.statement import Statement
from nkigym_graph.nki_sim.timing.constants import TimingConstants

LOAD_LOOKAHEAD_BYTES = 64 * 1024
"""Bytes per partition of loaded tiles allowed to wait for their first reader."""


def pipelined_order(
    program: Program,
    constants: TimingConstants,
    sinks: Callable[[Statement], bool],
    psum_bytes: int,
    held_in_psum: Callable[[str], bool] | None = None,
    engines_of: Callable[[Statement], tuple[str, ...]] | None = None,
    absorbed: Callable[[int], bool] | None = None,
    priority: str = "start",
) -> list[int]:
    """Every statement of ``program``, in the list-scheduled order above, with at most
    ``psum_bytes`` per partition of Tensor Engine results live at once (every result
    counts when ``held_in_psum`` is None); ``engines_of`` gives the engines a statement
    may run on (None: its op's engine); ``absorbed`` statements take no time of their own
    (another statement's instruction does their work); ``priority`` is one of
    ``PRIORITIES`` (see the module docstring)."""
    if priority not in PRIORITIES:
        raise ValueError(f"unknown priority {priority!r} (known: {', '.join(PRIORITIES)})")
    order: list[int] = []
    state = _State(program, constants, sinks, psum_bytes, held_in_psum, engines_of, absorbed)
    state.rank = _chains(program, constants) if priority == "chain" else None
    while state.ready:
        node = state.pick()
        state.issue(node)
        order.append(node)
    return order


class _State:
    """The list scheduler's view: issued statements' finish times, queues, memory."""

    def __init__(
        self,
        program: Program,
        constants: TimingConstants,
        sinks: Callable[[Statement], bool],
        psum_bytes: int,
        held_in_psum: Callable[[str], bool] | None = None,
        engines_of: Callable[[Statement], tuple[str, ...]] | None = None,
        absorbed: Callable[[int], bool] | None = None,
    ) -> None:
        self.program, self.constants, self.sinks, self.psum_bytes = program, constants, sinks, psum_bytes
        self.held_in_psum = held_in_psum or (lambda var: True)
        self.engines_of = engines_of or (lambda stmt: (stmt.op.engine,))
        self.absorbed = absorbed or (lambda node: False)
        self.rank: dict[int, float] | None = None
        """Per statement, its chain of work (``chain`` priority), or None (``start``)."""
        self.ran_on: dict[int, str] = {}
        """Statement -> the engine (track) the order times it on."""
        self.missing = {node: len(program.predecessors(node)) for node in program.ids}
        self.ready = [node for node in program.ids if self.missing[node] == 0]
        self.finish = dict.fromkeys(program.ids, 0.0)
        self.free: dict[str, float] = {}
        self.loaded = 0
        """Bytes per partition of issued loads whose first reader is not issued."""
        self.unread: dict[int, int] = {}
        self.psum = 0
        """Bytes per partition of Tensor Engine results some reader still needs."""
        self.readers_left = {var: len(program.consumers_of(var)) for var in program.variables}
        self.reads: dict[int, list[str]] = {node: [] for node in program.ids}
        """Per statement, the variable of each of its reads (an accumulation's included)."""
        for var in program.variables:
            for reader, _ in program.consumers_of(var):
                self.reads[reader].append(var)
        self.in_psum: dict[str, int] = {}

    def inputs_ready(self, node: int, track: str) -> float:
        """When ``node``'s inputs are ready for an instruction on ``track``."""
        sync = self.constants.engine_sync_ns
        return max(
            (
                self.finish[p] + (sync if self.ran_on[p] != track and self.ran_on[p] in COMPUTE else 0.0)
                for p in self.program.predecessors(node)
            ),
            default=0.0,
        )

    def placed(self, node: int) -> tuple[float, str]:
        """The earliest start of ``node`` and the track it gets."""
        stmt = self.program[node]
        tracks = self.engines_of(stmt) if stmt.op.engine in COMPUTE else (_track(self.program, stmt),)
        return min((max(self.inputs_ready(node, t), self.free.get(t, 0.0)), t) for t in tracks)

    def start(self, node: int) -> float:
        return self.placed(node)[0]

    def holds_psum(self, stmt: Statement) -> bool:
        return stmt.op.engine == "tensor" and self.held_in_psum(stmt.dst.var)

    def fits(self, node: int) -> bool:
        stmt = self.program[node]
        if self.sinks(stmt):
            return self.loaded + _partition_bytes(self.program, stmt) <= LOAD_LOOKAHEAD_BYTES
        if stmt.op.engine == "tensor" and stmt.dst.var not in self.in_psum:
            return self.psum + _psum_bytes(stmt) <= self.psum_bytes  # a scratch: a bank for a moment
        return True

    def pick(self) -> int:
        candidates = [n for n in self.ready if self.fits(n)] or self.ready
        rank, order_key = self.rank, self.program.order_key
        if rank is None:
            return min(candidates, key=lambda n: (self.start(n), order_key(n)))
        taking = [n for n in candidates if self.takes_psum(n)]
        if len(taking) > 1:  # PSUM for new results in program order
            later = set(taking) - {min(taking, key=order_key)}
            candidates = [n for n in candidates if n not in later]
        starts = {n: self.start(n) for n in candidates}
        first = min(starts.values())
        return min(candidates, key=lambda n: (starts[n] > first, -rank[n], starts[n], order_key(n)))

    def takes_psum(self, node: int) -> bool:
        """Whether ``node`` writes a result the kernel holds in PSUM for the first time."""
        stmt = self.program[node]
        return self.holds_psum(stmt) and stmt.dst.var not in self.in_psum

    def issue(self, node: int) -> None:
        program = self.program
        stmt = program[node]
        self.ready.remove(node)
        start, track = self.placed(node)
        if self.absorbed(node):  # done by its producer's instruction
            producer = max(program.predecessors(node), key=lambda p: self.finish[p])
            self.finish[node], self.ran_on[node] = self.finish[producer], self.ran_on[producer]
        else:
            self.finish[node] = start + _duration_ns(program, stmt, self.constants, track)
            self.free[track] = self.finish[node]
            self.ran_on[node] = track
        if stmt.op.engine == "tensor" and not self.held_in_psum(stmt.dst.var):
            self._evict(node, stmt)
        if self.sinks(stmt):
            self.unread[node] = _partition_bytes(program, stmt)
            self.loaded += self.unread[node]
        if self.holds_psum(stmt) and stmt.dst.var not in self.in_psum:
            self.in_psum[stmt.dst.var] = _psum_bytes(stmt)
            self.psum += self.in_psum[stmt.dst.var]
        for pred in program.predecessors(node):
            self.loaded -= self.unread.pop(pred, 0)
        for var in self.reads[node]:
            self.readers_left[var] = self.readers_left.get(var, 1) - 1
            if self.readers_left[var] <= 0 and var in self.in_psum:
                self.psum -= self.in_psum.pop(var)
        for succ in program.successors(node):
            self.missing[succ] -= 1
            if self.missing[succ] == 0:
                self.ready.append(succ)

    def _evict(self, node: int, stmt: Statement) -> None:
        """A result copied from PSUM to SBUF right away: the copy on the Vector or Scalar
        Engine, whichever ends it first; the result is ready when the copy is."""
        c = self.constants
        columns = _per_partition(stmt.dst.slices)
        ready = self.finish[node] + c.engine_sync_ns
        end, track = min(
            (max(ready, self.free.get(t, 0.0)) + _compute_ns(c, t, columns, 1), t) for t in EVICTING
        )
        self.free[track] = end
        self.finish[node] = end
        self.ran_on[node] = track


PRIORITIES = ("start", "chain")


def _chains(program: Program, c: TimingConstants) -> dict[int, float]:
    """Per statement, the time of the longest chain of statements from it to the end of
    the program (its own time included)."""
    chain: dict[int, float] = {}
    for node, stmt in reversed(list(program.items())):
        after = max((chain[s] for s in program.successors(node)), default=0.0)
        chain[node] = _duration_ns(program, stmt, c) + after
    return chain


COMPUTE = ("tensor", "vector", "scalar", "gpsimd")
EVICTING = ("vector", "scalar")
"""The engines that copy PSUM to SBUF."""


def _psum_bytes(stmt: Statement) -> int:
    """A Tensor Engine result in PSUM: a whole 2 KiB bank per tile (fp32, at most 512 wide)."""
    return 2048


def _track(program: Program, stmt: Statement) -> str:
    engine = stmt.op.engine
    if engine == "dma":
        return "load" if program.variables[stmt.dst.var].external is False else "store"
    return engine


def _per_partition(slices: Slices) -> int:
    return math.prod(hi - lo for lo, hi in slices[1:]) if len(slices) > 1 else 1


def _partition_bytes(program: Program, stmt: Statement) -> int:
    return _per_partition(stmt.dst.slices) * itemsize(program.variables[stmt.operands[0].var].dtype)


def _duration_ns(program: Program, stmt: Statement, c: TimingConstants, track: str = "") -> float:
    """The timing model's time for ``stmt``'s instruction on ``track`` (default: its op's engine)."""
    op = stmt.op
    engine = track if track in COMPUTE else op.engine
    reads = [stmt.operands[p] for p in op.read_positions]
    elements = max((_per_partition(o.slices) for o in (*reads, stmt.dst)), default=1)
    if op.engine == "dma":
        nbytes = (stmt.dst.slices[0][1] - stmt.dst.slices[0][0]) * _partition_bytes(program, stmt)
        return c.dma_fixed_ns_hwdge + nbytes / (c.dma_queues * c.dma_queue_bytes_per_ns)
    if op.engine == "tensor":
        columns = (
            _per_partition(reads[1].slices)
            if len(reads) > 1
            else reads[0].slices[0][1] - reads[0].slices[0][0]
        )
        return (c.pe_fixed_cycles + max(columns, c.pe_min_moving)) / c.pe_clock_ghz
    streams = sum(1 for o in reads if _per_partition(o.slices) > 1)
    return _compute_ns(c, engine, elements, streams)


def _compute_ns(c: TimingConstants, engine: str, elements: int, streams: int) -> float:
    """One Vector, Scalar or GpSimd instruction of ``elements`` per partition over
    ``streams`` tensor inputs (the timing model's ``compute_ns``)."""
    if engine == "scalar":
        return (c.scalar_fixed_cycles + elements * c.scalar_cycles_per_element) / c.scalar_clock_ghz
    if engine == "gpsimd":
        return (c.gpsimd_fixed_cycles + elements * c.gpsimd_cycles_per_element) / c.gpsimd_clock_ghz
    if engine == "vector":
        per = c.vector_cycles_per_element_two_inputs if streams >= 2 else c.vector_cycles_per_element
        return (c.vector_fixed_cycles + elements * per) / c.vector_clock_ghz
    return 0.0
