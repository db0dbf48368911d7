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
    program: Program, constants: TimingConstants, sinks: Callable[[Statement], bool], psum_bytes: int
) -> list[int]:
    """Every statement of ``program``, in the list-scheduled order above, with at most
    ``psum_bytes`` per partition of Tensor Engine results live at once."""
    order: list[int] = []
    state = _State(program, constants, sinks, psum_bytes)
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
    ) -> None:
        self.program, self.constants, self.sinks, self.psum_bytes = program, constants, sinks, psum_bytes
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
        self.in_psum: dict[str, int] = {}

    def start(self, node: int) -> float:
        inputs = max((self.finish[p] for p in self.program.predecessors(node)), default=0.0)
        return max(inputs, self.free.get(_track(self.program, self.program[node]), 0.0))

    def fits(self, node: int) -> bool:
        stmt = self.program[node]
        if self.sinks(stmt):
            return self.loaded + _partition_bytes(self.program, stmt) <= LOAD_LOOKAHEAD_BYTES
        if stmt.op.engine == "tensor" and stmt.dst.var not in self.in_psum:
            return self.psum + _psum_bytes(stmt) <= self.psum_bytes
        return True

    def pick(self) -> int:
        candidates = [n for n in self.ready if self.fits(n)] or self.ready
        return min(candidates, key=lambda n: (self.start(n), self.program.order_key(n)))

    def issue(self, node: int) -> None:
        program = self.program
        stmt = program[node]
        self.ready.remove(node)
        self.finish[node] = self.start(node) + _duration_ns(program, stmt, self.constants)
        self.free[_track(program, stmt)] = self.finish[node]
        if self.sinks(stmt):
            self.unread[node] = _partition_bytes(program, stmt)
            self.loaded += self.unread[node]
        if stmt.op.engine == "tensor" and stmt.dst.var not in self.in_psum:
            self.in_psum[stmt.dst.var] = _psum_bytes(stmt)
            self.psum += self.in_psum[stmt.dst.var]
        for pred in program.predecessors(node):
            self.loaded -= self.unread.pop(pred, 0)
        for position in stmt.op.read_positions:
            var = stmt.operands[position].var
            self.readers_left[var] = self.readers_left.get(var, 1) - 1
            if self.readers_left[var] <= 0 and var in self.in_psum:
                self.psum -= self.in_psum.pop(var)
        for succ in program.successors(node):
            self.missing[succ] -= 1
            if self.missing[succ] == 0:
                self.ready.append(succ)


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


def _duration_ns(program: Program, stmt: Statement, c: TimingConstants) -> float:
    """The timing model's time for ``stmt``'s instruction (a flexible one at Vector speed)."""
    op = stmt.op
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
    if op.engine == "scalar":
        return (c.scalar_fixed_cycles + elements * c.scalar_cycles_per_element) / c.scalar_clock_ghz
    if op.engine in ("vector", "gpsimd"):
        streams = sum(1 for o in reads if _per_partition(o.slices) > 1)
        per = c.vector_cycles_per_element_two_inputs if streams >= 2 else c.vector_cycles_per_element
        return (c.vector_fixed_cycles + elements * per) / c.vector_clock_ghz
    return 0.0
