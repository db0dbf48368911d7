"""Timing a kernel plan on the profile's engine model, without running it.

A scheduled program's plan (``nkigym_graph.scheduling``) says which instruction the
kernel runs for each step and which buffer every tile sits in. That is all the profile
(``nki_sim.profile``) looks at when it times a simulated run: the engine, the work and
the memory regions each instruction touches. So the plan is priced by building the same
instruction stream the NKI backend emits for it -- one event per step, with the regions
of its buffers -- and scheduling it with the profile's own scheduler and constants
(``nkigym_graph.nki_sim.timing``). The figures are *modeled*: no numbers are computed,
and they agree with the profile of the emitted kernel as long as the backend emits the
plan (``benchmarks/agreement.py`` checks it).

Per op (its ``engine``): ``load``/``store`` are hardware-DGE DMA transfers (bytes on the
HBM side, runs of contiguous HBM bytes for the size cliff); ``nc_matmul`` a Tensor Engine
instruction of ``N`` moving columns at the stationary operand's rate; Scalar (``activation``)
and Vector ops one instruction each, a ``+=`` on them a second (Vector) add.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from nkigym_graph.ir.dtypes import itemsize
from nkigym_graph.ir.memo import memo
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.schedule import ScheduleError
from nkigym_graph.ir.slices import Slices
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.nki_sim.buffers import PSUM, SBUF, SHARED_HBM, Buffer
from nkigym_graph.nki_sim.memory import AllocRecord
from nkigym_graph.nki_sim.timing.constants import timing_constants
from nkigym_graph.nki_sim.timing.recorder import DMA, GPSIMD, PE, SCALAR, VECTOR, Box, Event
from nkigym_graph.nki_sim.timing.result import Profile, build_profile
from nkigym_graph.nki_sim.timing.schedule import schedule
from nkigym_graph.plugin.cost_report import CostReport
from nkigym_graph.scheduling.allocate import Slot
from nkigym_graph.scheduling.plan import KernelPlan, kernel_plan

ENGINE_OF: Mapping[str, str] = {
    "tensor": PE,
    "vector": VECTOR,
    "scalar": SCALAR,
    "gpsimd": GPSIMD,
    "dma": DMA,
}
"""Op engine (``Op.engine``) -> the profile's engine track."""


class _Regions:
    """Allocation records of the kernel's buffers, and boxes of regions in them."""

    def __init__(self, plan: KernelPlan) -> None:
        self.records: list[AllocRecord] = []
        self.slots: dict[Slot, AllocRecord] = {}
        self.slot_itemsize: dict[str, int] = {}
        self.slot_dtype: dict[str, str] = {}
        for stream in plan.streams.values():
            size = itemsize(stream.dtype)
            self.slot_itemsize[stream.name] = size
            self.slot_dtype[stream.name] = stream.dtype
            buffer = PSUM if stream.buffer == "psum" else SBUF
            for number in range(stream.buffers):
                record = self._record(stream.name, buffer, stream.shape, stream.dtype, size)
                self.slots[Slot(stream.name, number)] = record
        self.hbm: dict[str, AllocRecord] = {}
        self.hbm_itemsize: dict[str, int] = {}
        program = plan.program
        for name, info in program.variables.items():
            if info.external:
                size = itemsize(info.dtype)
                self.hbm_itemsize[name] = size
                self.hbm[name] = self._record(name, SHARED_HBM, info.shape, info.dtype or "float32", size)

    def _record(
        self, name: str, buffer: Buffer, shape: tuple[int, ...], dtype: str, size: int
    ) -> AllocRecord:
        per_partition = math.prod(shape[1:]) * size
        record = AllocRecord(
            len(self.records), name, buffer, shape, dtype, per_partition, "nl.ndarray", 0, 0, 0
        )
        self.records.append(record)
        return record

    def hbm_box(self, operand: Operand) -> tuple[AllocRecord, Box]:
        size = self.hbm_itemsize[operand.var]
        (r0, r1), *rest = operand.slices
        c0, c1 = rest[-1] if rest else (0, 1)
        inner = math.prod(hi - lo for lo, hi in rest[:-1]) if len(rest) > 1 else 1
        return self.hbm[operand.var], (r0, r1, c0 * size * inner, c1 * size * inner)

    def slot_box(self, slot: Slot, slices: Slices) -> tuple[AllocRecord, Box]:
        size = self.slot_itemsize[slot.stream]
        (p0, p1), *rest = slices
        c0, c1 = rest[-1] if rest else (0, 1)
        return self.slots[slot], (p0, p1, c0 * size, c1 * size)


def _contiguous_bytes(shape: Sequence[int], slices: Slices, size: int) -> int:
    """Bytes of the longest contiguous run at the end of a row-major view."""
    run = size
    stride = size
    for (lo, hi), extent in zip(reversed(slices), reversed(shape), strict=True):
        n = hi - lo
        if n != 1 and stride != run:
            break
        run *= n
        stride *= extent
    return run


def _per_partition(slices: Slices) -> int:
    return math.prod(hi - lo for lo, hi in slices[1:]) if len(slices) > 1 else 1


def kernel_profile(plan: KernelPlan) -> Profile:
    """The profile of ``plan``'s kernel, priced without running it (see the module docstring)."""
    program = plan.program
    target = program.target
    constants = timing_constants(target)
    regions = _Regions(plan)
    events: list[Event] = []
    for step in plan.steps:
        stmt = program.statements[step.node]
        slots = dict(step.slots)
        for event in _events(stmt, slots, regions, program.variables):
            event.index = len(events)
            events.append(event)
    last = len(events)
    for record in regions.records:
        record.last = last
    timed, spans = schedule(events, regions.records, constants)
    return build_profile(target.name, constants, "", events, regions.records, timed, spans)


def _events(
    stmt: Statement, slots: Mapping[str, Slot], regions: _Regions, variables: Mapping[str, object]
) -> list[Event]:
    op = stmt.op
    name = op.name
    if name == "alloc":
        return []
    engine = ENGINE_OF.get(op.engine)
    if engine is None:
        return []

    def region(operand: Operand) -> tuple[AllocRecord, Box]:
        slot = slots.get(operand.var)
        return regions.slot_box(slot, operand.slices) if slot is not None else regions.hbm_box(operand)

    reads = [stmt.operands[p] for p in op.read_positions]
    writes = [stmt.operands[p] for p in op.write_positions]
    event = Event(0, f"nkigym.{name}", 0, engine)
    event.reads = [region(o) for o in reads]
    event.writes = [region(o) for o in writes]
    if engine == DMA:
        on_chip = writes[0] if writes[0].var in slots else reads[0]
        hbm = reads[0] if on_chip is writes[0] else writes[0]
        size = regions.hbm_itemsize[hbm.var]
        event.hwdge = True
        event.to_hbm = on_chip is reads[0]
        event.partitions = on_chip.slices[0][1] - on_chip.slices[0][0]
        event.first_partition = on_chip.slices[0][0]
        event.bytes_per_partition = _per_partition(on_chip.slices) * size
        shape = regions.hbm[hbm.var].shape
        event.chunk_bytes = max(1, min(_contiguous_bytes(shape, hbm.slices, size), event.bytes_per_partition))
        return [event]
    touched = [*reads, *writes]
    event.elements = max(_per_partition(o.slices) for o in touched)
    event.inputs = max(1, len(reads))
    if engine == PE:
        stationary, moving = reads[0], reads[1]
        event.elements = _per_partition(moving.slices)
        event.dtype = regions.slot_dtype[slots[stationary.var].stream]
        k = stationary.slices[0][1] - stationary.slices[0][0]
        event.flops = 2.0 * k * _per_partition(stationary.slices) * event.elements
        return [event]
    if not stmt.accumulate:
        return [event]
    add = Event(0, "nisa.tensor_tensor", 0, VECTOR)
    add.reads = [region(writes[0])]
    add.writes = [region(writes[0])]
    add.elements = event.elements
    add.inputs = 2
    return [event, add]


def scheduled_report(program: Program, model: str, unscheduled: Callable[[], CostReport]) -> CostReport:
    """The cost report of a scheduled ``program``: its plan's kernel timed as above. A
    plan whose buffers overflow on-chip memory is timed and marked infeasible; a schedule
    that cannot run at all is infeasible, priced as ``unscheduled()``, with the reason."""
    try:
        plan = kernel_plan(program, overflowing=True)
    except ScheduleError as err:
        base = unscheduled()
        return replace(base, model=model, feasible=False, reason=f"schedule: {err}")
    profile = memo(program, "kernel_profile", lambda _: kernel_profile(plan))
    target = program.target
    busy = {_REPORT_ENGINE[engine]: ns * 1e-9 for engine, ns in profile.busy_ns.items() if ns > 0}
    peak = profile.peak_tflops * 1e12
    bandwidth = profile.constants.dma_queues * profile.constants.dma_queue_bytes_per_ns * 1e9
    streams = plan.streams.values()
    return CostReport(
        model=model,
        target=target.name,
        seconds=profile.total_ns * 1e-9,
        engine_seconds=busy,
        bytes_moved=profile.dma_bytes,
        flops=round(profile.flops),
        peak_flops=peak,
        knee=peak / bandwidth,
        statements=len(plan.program),
        peak_sbuf_bytes=sum(s.buffers * s.bytes_per_partition for s in streams if s.buffer == "sbuf"),
        peak_psum_bytes=sum(s.buffers * s.bytes_per_partition for s in streams if s.buffer == "psum"),
        sbuf_capacity=target.sbuf_bytes_per_partition,
        psum_capacity=target.psum_bytes_per_partition,
        feasible=plan.overflow is None,
        reason="" if plan.overflow is None else f"schedule: {plan.overflow}",
    )


_REPORT_ENGINE = {PE: "tensor", VECTOR: "vector", SCALAR: "scalar", GPSIMD: "gpsimd", DMA: "dma"}
