"""Recording the instruction stream a simulation executes, for the timing model.

While a profiled kernel runs, every top-level NKI call reports itself here (one hook in
:func:`nkigym_graph.nki_sim.instruction.instruction`). The recorder notes which engine
runs it, how much work it is, and the memory regions it reads and writes: per
allocation, a box of partitions x bytes within a partition row (HBM tensors: rows x
bytes within a row). Scheduling happens after the run (:mod:`.schedule`), when the live
range of every tile is known.
"""

from __future__ import annotations

import inspect
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from nkigym_graph.nki_sim.dtypes import dtype_name
from nkigym_graph.nki_sim.memory import AllocRecord
from nkigym_graph.nki_sim.state import current, kernel_line
from nkigym_graph.nki_sim.tensor import Tensor, same_view

Box = tuple[int, int, int, int]
"""(first partition, end partition, first byte, end byte) within an allocation."""

PE, VECTOR, SCALAR, GPSIMD, DMA = "Tensor", "Vector", "Scalar", "GpSimd", "DMA"
COMPUTE_ENGINES = (PE, VECTOR, SCALAR, GPSIMD)


@dataclass(slots=True)
class Event:
    """One executed instruction, as the timing model sees it."""

    index: int
    name: str
    line: int
    engine: str
    """One of the engines, ``DMA``, or ``""`` for calls that take no time (allocation, views)."""
    reads: list[tuple[AllocRecord, Box]] = field(default_factory=list)
    writes: list[tuple[AllocRecord, Box]] = field(default_factory=list)
    elements: int = 0
    """Compute: elements per partition processed (matmul: moving columns N)."""
    inputs: int = 1
    """Compute: tensor inputs read (one-input vs two-input rate)."""
    dtype: str = ""
    """Matmul: the input dtype (rate and peak)."""
    flops: float = 0.0
    partitions: int = 0
    """DMA: partitions of the on-chip side, starting at ``first_partition``."""
    first_partition: int = 0
    bytes_per_partition: int = 0
    to_hbm: bool = False
    """DMA: the transfer writes HBM (a store; it uses the queues' outbound rings)."""
    chunk_bytes: int = 0
    """DMA: bytes of each contiguous run in HBM (one descriptor element)."""
    hwdge: bool = False
    """DMA: a hardware-DGE transfer (``nisa.dma_copy``, ``nisa.dma_transpose``)."""
    free: bool = False
    """Compute: an instruction the hardware folds into another (PSUM ``+=`` of a matmul)."""

    @property
    def bytes(self) -> int:
        return self.partitions * self.bytes_per_partition


def box_of(tensor: Tensor, owner_address: int | None = None) -> Box:
    """The partitions x row-bytes box a view covers in its allocation (a bounding box).

    Dims whose stride is a whole number of rows (partitions) move between rows, the
    others within a row; a view that leaves its row counts whole rows."""
    owner = tensor.storage.values
    if owner_address is None:
        owner_address = owner.__array_interface__["data"][0]
    return _box(tensor.data, owner_address, _row_bytes(owner))


def _row_bytes(owner: Any) -> int:
    """Bytes of one partition row (HBM: one row) of an allocation's array."""
    rows = owner.shape[0] if owner.ndim else 1
    return int(max(owner.nbytes // max(rows, 1), 1))


def _box(data: Any, owner_address: int, row_bytes: int) -> Box:
    size = data.itemsize
    offset = data.__array_interface__["data"][0] - owner_address
    first, f0 = divmod(offset, row_bytes)
    p_lo = p_hi = 0
    f_lo = f_hi = 0
    for n, st in zip(data.shape, data.strides, strict=True):
        span = (n - 1) * st
        if st % row_bytes == 0:
            p_lo, p_hi = p_lo + min(0, span // row_bytes), p_hi + max(0, span // row_bytes)
        else:
            f_lo, f_hi = f_lo + min(0, span), f_hi + max(0, span)
    if f0 + f_lo < 0 or f0 + f_hi + size > row_bytes:
        top = offset + f_lo + p_lo * row_bytes
        bottom = offset + f_hi + size + p_hi * row_bytes
        return (top // row_bytes, (bottom - 1) // row_bytes + 1, 0, row_bytes)
    return (first + p_lo, first + p_hi + 1, f0 + f_lo, f0 + f_hi + size)


def _per_partition(tensor: Tensor) -> int:
    shape = tensor.shape
    return math.prod(shape[1:]) if len(shape) > 1 else 1


_PARAMETERS: dict[Callable[..., Any], list[str]] = {}
"""Parameter names of each instruction's implementation (binds arguments by name)."""

_PE_CALLS = {"nisa.nc_matmul", "nl.matmul", "nl.transpose"}
DMA_CALLS = {"nisa.dma_copy": True, "nisa.dma_transpose": True, "nl.load": False, "nl.store": False}
"""DMA transfers, and whether each runs on a hardware DGE queue."""
SCALAR_CALLS = frozenset({"nisa.activation", "nisa.activation_reduce"})
"""Calls the Scalar Engine runs unless given another engine."""
GPSIMD_CALLS = frozenset({"nisa.iota", "nisa.affine_select"})
"""Calls the GpSimd Engine runs unless given another engine."""
_FILLS = {"nl.zeros", "nl.zeros_like", "nl.full", "nl.ones"}
_HBM_FILLS = {"tensor assignment", *_FILLS}
"""Calls that are DMA transfers when they touch HBM."""
_NO_TIME = {"nl.ndarray", "nl.broadcast_to", "nl.device_print"}
_VECTOR_NL_UNARY = {"nl.copy"}
_WRITTEN_ARGS = {"dst", "reduce_res"}


def _engine_arg(bound: dict[str, Any]) -> str | None:
    value = bound.get("engine")
    name = getattr(value, "name", None)
    return {"vector": VECTOR, "scalar": SCALAR, "gpsimd": GPSIMD, "tensor": PE}.get(str(name))


class _Owner(NamedTuple):
    """What the recorder keeps of one allocation (found by ``id`` of its storage)."""

    storage: Any
    """The storage itself: kept alive, so ids stay unique during the run."""
    address: int
    row_bytes: int
    on_chip: bool
    whole: Box
    """The box of the whole allocation (a view that is the allocation's own array)."""


class Recorder:
    """Collects :class:`Event` s while a kernel runs (``RunState.timing``)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._owners: dict[int, _Owner] = {}

    def _owner(self, tensor: Tensor) -> _Owner:
        storage = tensor.storage
        known = self._owners.get(id(storage))
        if known is None:
            values = storage.values
            address = values.__array_interface__["data"][0]
            row_bytes = _row_bytes(values)
            whole = _box(values, address, row_bytes)
            known = _Owner(storage, address, row_bytes, storage.record.buffer.on_chip, whole)
            self._owners[id(storage)] = known
        return known

    def _access(self, tensor: Tensor) -> tuple[AllocRecord, Box]:
        """The allocation a view lies in, and its box there (a whole allocation is cached)."""
        owner = self._owner(tensor)
        data = tensor.data
        if data is owner.storage.values:
            return owner.storage.record, owner.whole
        return owner.storage.record, _box(data, owner.address, owner.row_bytes)

    def record(
        self, name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], result: Any
    ) -> None:
        event = Event(current().step, name, kernel_line(sys._getframe(1)), "")
        self.events.append(event)
        if name in _NO_TIME:
            return
        names = _PARAMETERS.get(fn)
        if names is None:
            params = inspect.signature(fn).parameters.values()
            names = _PARAMETERS[fn] = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        bound = dict(zip(names, args, strict=False))
        bound.update(kwargs)
        written: list[Tensor] = []
        read: list[Tensor] = []
        if name == "tensor assignment":
            target, key, value = bound.get("target"), bound.get("key"), bound.get("value")
            view = target[key] if isinstance(target, Tensor) else None
            if view is not None and isinstance(value, Tensor) and same_view(view, value):
                return  # ``t[...] += u`` stores t's own view back: no instruction
            if view is not None:
                written.append(view)
            if isinstance(value, Tensor):
                read.append(value)
        elif name.startswith("tensor ") and name.endswith("="):
            target = bound.get("target")
            if isinstance(target, Tensor):
                written.append(target)
                read.append(target)
            other = bound.get("other")
            if isinstance(other, Tensor):
                read.append(other)
        else:
            for key, value in bound.items():
                if isinstance(value, Tensor):
                    (written if key in _WRITTEN_ARGS else read).append(value)
            if isinstance(result, Tensor):
                written.append(result)
        if not written and not read:
            return
        access = self._access
        event.writes = [access(t) for t in written]
        event.reads = [access(t) for t in read]
        self._classify(event, name, bound, written, read)

    def _classify(
        self, event: Event, name: str, bound: dict[str, Any], written: list[Tensor], read: list[Tensor]
    ) -> None:
        touched = written + read
        owners = self._owners
        on_chip = [owners[id(t.storage)].on_chip for t in touched]
        if name in DMA_CALLS or (not all(on_chip) and name in _HBM_FILLS):
            self._dma(event, written, touched, on_chip, hwdge=DMA_CALLS.get(name, False))
            return
        event.elements = max(_per_partition(t) for t in touched)
        # a [P, 1] operand (tensor_scalar's operand, activation's bias or scale) is one
        # value per lane held for the whole instruction, not a second stream of inputs
        event.inputs = max(1, sum(1 for t in read if _per_partition(t) > 1))
        if name in _PE_CALLS or (name == "nisa.nc_transpose" and _pe_transpose(bound, written, read)):
            event.engine = PE
            moving = bound.get("moving", bound.get("y"))
            stationary = bound.get("stationary", bound.get("x"))
            if isinstance(moving, Tensor) and isinstance(stationary, Tensor):
                event.elements = _per_partition(moving)
                event.dtype = dtype_name(stationary.dtype)
                if not bound.get("is_transpose"):
                    k = stationary.shape[0]
                    event.flops = 2.0 * k * _per_partition(stationary) * event.elements
            elif read:
                event.elements = read[0].shape[0]
                event.dtype = dtype_name(read[0].dtype)
            return
        if _folded_accumulation(name, written, read):
            event.engine, event.free = PE, True
            return
        chosen = _engine_arg(bound)
        if chosen is not None and chosen != PE:
            event.engine = chosen
        elif name in SCALAR_CALLS:
            event.engine = SCALAR
        elif name in GPSIMD_CALLS:
            event.engine = GPSIMD
        elif (
            name.startswith("nl.")
            and name not in _VECTOR_NL_UNARY
            and len(read) == 1
            and _is_activation(name)
        ):
            event.engine = SCALAR
        else:
            event.engine = VECTOR

    def _dma(
        self, event: Event, written: list[Tensor], touched: list[Tensor], on_chip: list[bool], hwdge: bool
    ) -> None:
        event.engine = DMA
        event.hwdge = hwdge
        event.to_hbm = not all(on_chip[: len(written)])
        side_at = next((i for i, chip in enumerate(on_chip) if chip), None)
        side = touched[side_at] if side_at is not None else written[0] if written else touched[0]
        data = side.data
        shape = data.shape
        event.partitions = shape[0] if len(shape) > 1 else 1
        hbm = [t for t, chip in zip(touched, on_chip, strict=True) if not chip] or touched
        itemsize = max(t.data.itemsize for t in hbm)
        event.bytes_per_partition = (data.size // max(event.partitions, 1)) * itemsize
        if side_at is not None:
            event.first_partition = (event.writes + event.reads)[side_at][1][0]
        run = min(_contiguous_bytes(t) for t in hbm)
        event.chunk_bytes = max(1, min(run, event.bytes_per_partition))


def _contiguous_bytes(tensor: Tensor) -> int:
    """Bytes of the longest contiguous run at the end of a view (a descriptor's span)."""
    data = tensor.data
    run = data.itemsize
    for n, st in zip(reversed(data.shape), reversed(data.strides), strict=True):
        if n == 1:
            continue
        if st != run:
            break
        run *= n
    return run


def _folded_accumulation(name: str, written: list[Tensor], read: list[Tensor]) -> bool:
    """``psum += product`` with a PSUM product (``acc += nl.matmul(...)``): the Tensor
    Engine accumulates the matmul into ``acc``, so the ``+=`` itself takes no time. Other
    writes to PSUM (``psum *= 2.0``, ``psum += sbuf_tile``, ``psum[...] = tile``) are
    engine instructions like any other."""
    return (
        name == "tensor +="
        and bool(written)
        and written[0].buffer.kind == "psum"
        and len(read) == 2
        and read[1].buffer.kind == "psum"
    )


def _pe_transpose(bound: dict[str, Any], written: list[Tensor], read: list[Tensor]) -> bool:
    choice = getattr(bound.get("engine"), "name", "unknown")
    if choice in ("tensor", "vector"):
        return bool(choice == "tensor")
    return bool(written and read and written[0].buffer.kind == "psum" and read[0].buffer.kind == "sbuf")


_ACTIVATIONS = {
    "exp", "log", "tanh", "sigmoid", "relu", "gelu", "silu", "sqrt", "rsqrt", "sin", "cos",
    "erf", "softplus", "mish", "gelu_apprx_tanh", "square", "abs", "sign", "negative",
}  # fmt: skip


def _is_activation(name: str) -> bool:
    return name.removeprefix("nl.") in _ACTIVATIONS
