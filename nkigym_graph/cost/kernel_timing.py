"""Timing a kernel plan on the profile's engine model, without running it.

A scheduled program's plan (``nkigym_graph.scheduling``) says which instruction the
kernel runs for each step and which buffer every tile sits in. That is all the profile
(``nki_sim.profile``) looks at when it times a simulated run: the engine, the work and
the memory regions each instruction touches. So the plan is priced by building the same
instruction stream the NKI backend emits for it -- one event per step, with the regions
of its buffers -- and scheduling it with the profile's own scheduler and constants
(``nkigym_graph.nki_sim.timing``). The figures are *modeled*: no numbers are computed.
A backend may emit more than the plan says (the NKI backend spreads ``[1, F]`` rows over
the partitions and gives flexible instructions to other engines), so a cost model that
knows the backend passes ``scheduled_report`` the backend's timing of the kernel it
emits for the plan (the trn2 model does: ``nkigym_graph_plugins.nki_backend.timing``);
:func:`kernel_profile` is the plan's own instructions on their default engines.

Per op (its ``engine``): ``load``/``store`` are hardware-DGE DMA transfers (bytes on the
HBM side, runs of contiguous HBM bytes for the size cliff); ``nc_matmul`` a Tensor Engine
instruction of ``N`` moving columns at the stationary operand's rate; Scalar (``activation``)
and Vector ops one instruction each, a ``+=`` on them a second (Vector) add.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

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
from nkigym_graph.scheduling.allocate import Slot, slot_footprint, tile_dtypes
from nkigym_graph.scheduling.plan import KernelPlan, kernel_plan

ENGINE_OF: Mapping[str, str] = {
    "tensor": PE,
    "vector": VECTOR,
    "scalar": SCALAR,
    "gpsimd": GPSIMD,
    "dma": DMA,
}
"""Op engine (``Op.engine``) -> the profile's engine track."""


Ref = tuple[str, bool, Box]
"""A region an instruction touches: ``(variable, on chip, box in its buffer)``."""


class _Spec(NamedTuple):
    """One instruction of a statement, its buffers left open (they depend on the slots)."""

    fields: Mapping[str, object]
    reads: tuple[Ref, ...]
    writes: tuple[Ref, ...]


def _records(plan: KernelPlan) -> tuple[list[AllocRecord], dict[Slot, AllocRecord], dict[str, AllocRecord]]:
    """An allocation record per slot some step uses and per HBM tensor (each its own
    physical buffer; a slot no instruction touches times nothing, and a schedule may ask
    for millions of them)."""
    records: list[AllocRecord] = []

    def record(name: str, buffer: Buffer, shape: tuple[int, ...], dtype: str) -> AllocRecord:
        size = itemsize(dtype)
        found = AllocRecord(
            len(records), name, buffer, shape, dtype, math.prod(shape[1:]) * size, "nl.ndarray", 0, 0, 0
        )
        records.append(found)
        return found

    used = {slot for step in plan.steps for _, slot in step.slots}
    slots = {
        slot: record(stream.name, PSUM if stream.buffer == "psum" else SBUF, stream.shape, stream.dtype)
        for stream in plan.streams.values()
        for slot in sorted(s for s in used if s.stream == stream.name)
    }
    hbm = {
        name: record(name, SHARED_HBM, info.shape, info.dtype or "float32")
        for name, info in plan.program.variables.items()
        if info.external
    }
    return records, slots, hbm


def kernel_profile(plan: KernelPlan) -> Profile:
    """The profile of ``plan``'s kernel, priced without running it (see the module docstring)."""
    program = plan.program
    target = program.target
    constants = timing_constants(target)
    specs = memo(program, "instruction_specs", _specs)
    records, slot_records, hbm = _records(plan)
    events: list[Event] = []
    for step in plan.steps:
        slots = {var: slot_records[slot] for var, slot in step.slots}
        for spec in specs[step.node]:
            event = Event(index=len(events), line=0, **spec.fields)  # type: ignore[arg-type]
            event.reads = [(slots[v] if on_chip else hbm[v], box) for v, on_chip, box in spec.reads]
            event.writes = [(slots[v] if on_chip else hbm[v], box) for v, on_chip, box in spec.writes]
            events.append(event)
    for record in records:
        record.last = len(events)
    timed, spans = schedule(events, records, constants)
    return build_profile(target.name, constants, "", events, records, timed, spans)


def _specs(program: Program) -> dict[int, tuple[_Spec, ...]]:
    """Every statement's instructions, by id (see the module docstring), once per kernel
    program."""
    variables = program.variables
    dtype_of = tile_dtypes(program)  # as the plan's streams hold each tile

    def itemsize_of(var: str) -> int:
        return itemsize(dtype_of(var))

    def ref(operand: Operand) -> Ref:
        var, slices = operand
        size = itemsize_of(var)
        (p0, p1), *rest = slices
        c0, c1 = rest[-1] if rest else (0, 1)
        inner = math.prod(hi - lo for lo, hi in rest[:-1]) if len(rest) > 1 else 1
        return var, not variables[var].external, (p0, p1, c0 * size * inner, c1 * size * inner)

    return {node: _statement_specs(stmt, ref, dtype_of, variables) for node, stmt in program.items()}


def _statement_specs(
    stmt: Statement,
    ref: Callable[[Operand], Ref],
    dtype_of: Callable[[str], str],
    variables: Mapping[str, Any],
) -> tuple[_Spec, ...]:
    """The instructions the NKI backend emits for ``stmt`` (see the module docstring)."""
    op = stmt.op
    engine = ENGINE_OF.get(op.engine)
    if op.name == "alloc" or engine is None:
        return ()
    reads = [stmt.operands[p] for p in op.read_positions]
    writes = [stmt.operands[p] for p in op.write_positions]
    fields: dict[str, object] = {"name": f"nkigym.{op.name}", "engine": engine}
    spec_reads, spec_writes = tuple(ref(o) for o in reads), tuple(ref(o) for o in writes)
    if engine == DMA:
        to_hbm = variables[writes[0].var].external
        on_chip, hbm = (reads[0], writes[0]) if to_hbm else (writes[0], reads[0])
        size = itemsize(dtype_of(hbm.var))
        per_row = _per_partition(on_chip.slices) * size
        run = _contiguous_bytes(variables[hbm.var].shape, hbm.slices, size)
        fields.update(
            hwdge=True,
            to_hbm=to_hbm,
            partitions=on_chip.slices[0][1] - on_chip.slices[0][0],
            first_partition=on_chip.slices[0][0],
            bytes_per_partition=per_row,
            chunk_bytes=max(1, min(run, per_row)),
        )
        return (_Spec(fields, spec_reads, spec_writes),)
    elements = max(_per_partition(o.slices) for o in (*reads, *writes))
    # a [P, 1] operand is one value per lane held for the whole instruction, not a stream
    fields.update(elements=elements, inputs=max(1, sum(1 for o in reads if _per_partition(o.slices) > 1)))
    if engine == PE and len(reads) == 1:  # a transpose: a matmul against an identity
        (data,) = reads
        fields.update(elements=data.slices[0][1] - data.slices[0][0], dtype=dtype_of(data.var))
        return (_Spec(fields, spec_reads, spec_writes),)
    if engine == PE:
        stationary, moving = reads[0], reads[1]
        columns = _per_partition(moving.slices)
        k = stationary.slices[0][1] - stationary.slices[0][0]
        fields.update(
            elements=columns,
            dtype=dtype_of(stationary.var),
            flops=2.0 * k * _per_partition(stationary.slices) * columns,
        )
        return (_Spec(fields, spec_reads, spec_writes),)
    main = _Spec(fields, spec_reads, spec_writes)
    if not stmt.accumulate:
        return (main,)
    add = {"name": "nisa.tensor_tensor", "engine": VECTOR, "elements": elements, "inputs": 2}
    return (main, _Spec(add, spec_writes, spec_writes))


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


PlanTiming = Callable[[KernelPlan], Profile]
"""A plan -> the profile of its kernel (:func:`kernel_profile`, or a backend's timing of
the kernel it emits for the plan)."""


def scheduled_report(
    program: Program,
    model: str,
    unscheduled: Callable[[], CostReport],
    timing: PlanTiming = kernel_profile,
) -> CostReport:
    """The cost report of a scheduled ``program``: its plan's kernel timed by ``timing``
    (by default as above). A plan whose buffers overflow on-chip memory is timed and
    marked infeasible; a schedule that cannot run at all is infeasible, priced as
    ``unscheduled()``, with the reason."""
    try:
        plan = kernel_plan(program, overflowing=True)
    except ScheduleError as err:
        base = unscheduled()
        return replace(base, model=model, feasible=False, reason=f"schedule: {err}")
    profile = memo(program, ("kernel_profile", timing), lambda _: timing(plan))
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
        peak_psum_bytes=sum(s.buffers * slot_footprint(s, target) for s in streams if s.buffer == "psum"),
        sbuf_capacity=target.sbuf_bytes_per_partition,
        psum_capacity=target.psum_bytes_per_partition,
        feasible=plan.overflow is None,
        reason="" if plan.overflow is None else f"schedule: {plan.overflow}",
    )


_REPORT_ENGINE = {PE: "tensor", VECTOR: "vector", SCALAR: "scalar", GPSIMD: "gpsimd", DMA: "dma"}
