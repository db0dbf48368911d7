"""Timing a lowered kernel on the profile's engine model, without running it.

``nki_sim.profile`` runs a kernel and times the instructions it executes: per
instruction its engine, its work and the memory regions it reads and writes
(:mod:`nkigym_graph.nki_sim.timing.recorder`). A lowered kernel (a
:class:`~.builder.KernelBuilder`'s groups) already says all of that for every
instruction, so it is timed here the same way, instruction by instruction, with the
profile's own scheduler and constants: no numbers are computed. Every tile is its own
buffer, as in the straight-line kernel.

:func:`planned_profile` times the kernel the backend emits for a kernel plan
(:func:`.emitter.planned_kernel`: the engine policy the emitter keeps included), which is
how the trn2 cost model prices a scheduled program: the modeled figure is the profile of
the emitted kernel by construction.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from nkigym_graph.nki_sim.buffers import PSUM, SBUF, SHARED_HBM
from nkigym_graph.nki_sim.memory import AllocRecord
from nkigym_graph.nki_sim.timing.constants import timing_constants
from nkigym_graph.nki_sim.timing.recorder import (
    DMA,
    DMA_CALLS,
    GPSIMD,
    GPSIMD_CALLS,
    PE,
    SCALAR,
    SCALAR_CALLS,
    VECTOR,
    Box,
    Event,
)
from nkigym_graph.nki_sim.timing.result import Profile, build_profile
from nkigym_graph.nki_sim.timing.schedule import schedule
from nkigym_graph.scheduling.allocate import working_dtype
from nkigym_graph.scheduling.plan import KernelPlan

from .builder import WRITTEN, KernelBuilder, KernelTypes, Lowering
from .emitter import planned_kernel
from .errors import NkiEmitError
from .ir import Call, Hbm, Pool, Ref, Tile, instructions
from .lower import kernel_types
from .lowering import LOWERINGS
from .names import NKI_ITEMSIZE

ENGINE_ARGUMENT = {
    "nisa.engine.vector": VECTOR,
    "nisa.engine.scalar": SCALAR,
    "nisa.engine.gpsimd": GPSIMD,
}
"""An instruction's ``engine=`` argument -> the profile's engine track."""


class _Buffers:
    """An allocation record per buffer the kernel touches, made on its first use: a tile,
    a slot of a pool, an HBM tensor."""

    def __init__(self, kb: KernelBuilder) -> None:
        self.types = kb.types
        self.records: list[AllocRecord] = []
        self.by_key: dict[tuple[int, int], AllocRecord] = {}
        self.hbm_dtypes = {
            id(tensor): kb.types.params.get(tensor.name) or kb.types.outputs[var]
            for var, tensor in kb.hbm.items()
        }

    def dtype(self, ref: Ref) -> str:
        """The NKI name of the dtype of ``ref``'s buffer."""
        base = ref.base
        if isinstance(base, Hbm):
            return self.hbm_dtypes[id(base)]
        assert isinstance(base, Tile | Pool)
        code = base.dtype
        return code[3:] if code.startswith("nl.") else self.types.params[code.removesuffix(".dtype")]

    def itemsize(self, ref: Ref) -> int:
        base = ref.base
        if isinstance(base, Tile | Pool):
            return base.itemsize
        return NKI_ITEMSIZE[self.dtype(ref)]

    def access(self, ref: Ref) -> tuple[AllocRecord, Box]:
        """The record of ``ref``'s buffer and the box it covers there (as the recorder's)."""
        base = ref.base
        slot = ref.index.const % base.count if isinstance(base, Pool) and ref.index is not None else 0
        key = (id(base), slot)
        record = self.by_key.get(key)
        if record is None:
            assert isinstance(base, Tile | Pool | Hbm)
            buffer = SHARED_HBM if isinstance(base, Hbm) else PSUM if base.buffer == "psum" else SBUF
            size = self.itemsize(ref)
            record = AllocRecord(
                len(self.records),
                base.name,
                buffer,
                tuple(base.shape),
                self.dtype(ref),
                math.prod(base.shape[1:]) * size,
                "nl.ndarray",
                0,
                0,
                0,
            )
            self.records.append(record)
            self.by_key[key] = record
        return record, _box(ref, self.itemsize(ref))


def _bounds(ref: Ref) -> list[tuple[int, int]]:
    return [(start.const, stop.const) for start, stop in ref.slices]


def _box(ref: Ref, size: int) -> Box:
    """Partitions x bytes within a partition row of ``ref`` in its buffer (row-major)."""
    (p0, p1), *rest = _bounds(ref)
    shape = ref.base.shape
    stride, first, last = size, 0, 0
    for (lo, hi), extent in zip(reversed(rest), reversed(shape[1:]), strict=True):
        first += lo * stride
        last += max(hi - 1, lo) * stride
        stride *= extent
    return (p0, p1, first, last + size)


def _per_partition(ref: Ref) -> int:
    return math.prod(hi - lo for lo, hi in _bounds(ref)[1:])


def _partitions(ref: Ref) -> int:
    lo, hi = _bounds(ref)[0]
    return hi - lo if len(ref.slices) > 1 else 1


def _contiguous_bytes(ref: Ref, size: int) -> int:
    """Bytes of the longest contiguous run at the end of ``ref`` (a DMA descriptor's span)."""
    run = stride = size
    for (lo, hi), extent in zip(reversed(_bounds(ref)), reversed(ref.base.shape), strict=True):
        if hi - lo != 1:
            if stride != run:
                break
            run *= hi - lo
        stride *= extent
    return run


def kernel_events(kb: KernelBuilder) -> tuple[list[Event], list[AllocRecord]]:
    """The events the profile records for ``kb``'s kernel (straight-line), and the records
    of the buffers they touch."""
    buffers = _Buffers(kb)
    events: list[Event] = []
    for instr in instructions(kb.groups):
        if not isinstance(instr, Call):
            continue
        written = [arg for key, arg in instr.args if isinstance(arg, Ref) and key in WRITTEN]
        read = [arg for key, arg in instr.args if isinstance(arg, Ref) and key not in WRITTEN]
        if not written and not read:
            continue
        event = Event(index=len(events), name=instr.fn, line=0, engine="")
        event.writes = [buffers.access(ref) for ref in written]
        event.reads = [buffers.access(ref) for ref in read]
        _classify(event, dict(instr.args), written, read, buffers)
        events.append(event)
    for record in buffers.records:
        record.last = len(events)
    return events, buffers.records


def _classify(
    event: Event, args: Mapping[str, object], written: list[Ref], read: list[Ref], buffers: _Buffers
) -> None:
    """Engine and work of one instruction, as the recorder classifies it."""
    touched = written + read
    if event.name in DMA_CALLS:
        _dma(event, written, touched, buffers)
        return
    event.elements = max(_per_partition(ref) for ref in touched)
    event.inputs = max(1, sum(1 for ref in read if _per_partition(ref) > 1))
    moving, stationary = args.get("moving"), args.get("stationary")
    if event.name == "nisa.nc_matmul" and isinstance(moving, Ref) and isinstance(stationary, Ref):
        event.engine = PE
        event.elements = _per_partition(moving)
        event.dtype = buffers.dtype(stationary)
        if args.get("is_transpose") is None:
            event.flops = 2.0 * _partitions(stationary) * _per_partition(stationary) * event.elements
        return
    if event.name == "nisa.nc_transpose" and _in_psum(written[0]) and not _in_psum(read[0]):
        event.engine = PE
        event.elements = _partitions(read[0])
        event.dtype = buffers.dtype(read[0])
        return
    chosen = ENGINE_ARGUMENT.get(str(args.get("engine")))
    if chosen is not None:
        event.engine = chosen
    elif event.name in SCALAR_CALLS:
        event.engine = SCALAR
    elif event.name in GPSIMD_CALLS:
        event.engine = GPSIMD
    else:
        event.engine = VECTOR


def _dma(event: Event, written: list[Ref], touched: list[Ref], buffers: _Buffers) -> None:
    on_chip = [not isinstance(ref.base, Hbm) for ref in touched]
    event.engine = DMA
    event.hwdge = DMA_CALLS[event.name]
    event.to_hbm = not all(on_chip[: len(written)])
    side_at = next((i for i, chip in enumerate(on_chip) if chip), None)
    side = touched[side_at] if side_at is not None else written[0]
    event.partitions = _partitions(side)
    hbm = [ref for ref, chip in zip(touched, on_chip, strict=True) if not chip] or touched
    itemsize = max(buffers.itemsize(ref) for ref in hbm)
    event.bytes_per_partition = _per_partition(side) * itemsize
    if side_at is not None:
        event.first_partition = (event.writes + event.reads)[side_at][1][0]
    run = min(_contiguous_bytes(ref, buffers.itemsize(ref)) for ref in hbm)
    event.chunk_bytes = max(1, min(run, event.bytes_per_partition))


def _in_psum(ref: Ref) -> bool:
    return isinstance(ref.base, Tile | Pool) and ref.base.buffer == "psum"


def kernel_profile(kb: KernelBuilder) -> Profile:
    """The profile of ``kb``'s kernel, timed without running it (see the module docstring)."""
    target = kb.target
    constants = timing_constants(target)
    events, records = kernel_events(kb)
    timed, spans = schedule(events, records, constants)
    return build_profile(target.name, constants, "", events, records, timed, spans)


def planned_profile(plan: KernelPlan, lowerings: Mapping[str, Lowering] = LOWERINGS) -> Profile:
    """The profile of the kernel the backend emits for ``plan`` (an error naming why when
    the backend cannot emit it)."""
    program = plan.program
    return kernel_profile(planned_kernel(plan, program.target, _planned_types(plan), lowerings))


def _planned_types(plan: KernelPlan) -> KernelTypes:
    """The kernel's dtypes as ``emit`` takes them for a scheduled program: as declared, or
    all the plan's dtype where the declared one is not (a float64 program's plan holds
    fp32 tiles)."""
    program = plan.program
    planned = working_dtype(program)
    try:
        declared = kernel_types(program, None)
    except NkiEmitError:
        return kernel_types(program, planned)
    return declared if declared.working == planned else kernel_types(program, planned)
