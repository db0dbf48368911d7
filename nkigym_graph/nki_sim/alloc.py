"""Creating tensors: on-chip and HBM allocations, and kernel inputs.

A fresh allocation reads as NaN (see :mod:`~nkigym_graph.nki_sim.dtypes`), so a kernel
that reads memory it never wrote produces NaN in its result. A single allocation larger
than the buffer fails at once; the live-range capacity check runs after the kernel.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from nkigym_graph.nki_sim.buffers import PSUM, SHARED_HBM, Buffer, resolve_buffer
from nkigym_graph.nki_sim.dtypes import dtype_name, fill_value, to_dtype
from nkigym_graph.nki_sim.memory import AllocRecord
from nkigym_graph.nki_sim.state import RunState, current, fail, kernel_line
from nkigym_graph.nki_sim.tensor import FRESH, OTHER, Storage, Tensor


def capacity(state: RunState, buffer: Buffer) -> int:
    """Bytes per partition of ``buffer`` on the running target."""
    target = state.target
    return target.psum_bytes_per_partition if buffer is PSUM else target.sbuf_bytes_per_partition


def check_shape(shape: Any) -> tuple[int, ...]:
    """``shape`` as a tuple of positive ints, or fail ``alloc.shape``."""
    dims = shape if isinstance(shape, tuple | list) else (shape,)
    try:
        out = tuple(operator.index(d) for d in dims)
    except TypeError:
        fail("alloc.shape", f"shape {shape!r} is not a tuple of ints")
    if not out or any(d <= 0 for d in out):
        fail("alloc.shape", f"shape {out} needs at least one dim, all positive")
    return out


def _record(
    state: RunState, name: str, buffer: Buffer, shape: tuple[int, ...], dtype: np.dtype[Any]
) -> AllocRecord:
    per_partition = math.prod(shape[1:]) * dtype.itemsize if buffer.on_chip else 0
    state.allocations += 1
    return AllocRecord(
        serial=state.allocations,
        name=str(name or ""),
        buffer=buffer,
        shape=shape,
        dtype_name=dtype_name(dtype),
        bytes_per_partition=per_partition,
        instruction=state.instruction or "nl.ndarray",
        line=kernel_line(),
        first=state.step,
        last=state.step,
    )


def allocate(shape: Any, dtype: Any, buffer: Any = None, name: Any = "", zero: bool = False) -> Tensor:
    """A new tensor, uninitialised (NaN) unless ``zero``."""
    state = current()
    dims = check_shape(shape)
    storage_dtype = to_dtype(dtype)
    if storage_dtype is None:
        fail("alloc.dtype", f"{dtype!r} is not an NKI dtype")
    buf = resolve_buffer(buffer)
    if buf is None:
        fail("alloc.buffer", f"{buffer!r} is not nl.sbuf, nl.psum or an HBM buffer")
    if buf.on_chip:
        if len(dims) < 2:
            fail("alloc.rank", f"{buf.label} tensor {dims} must have at least 2 dims")
        limit = state.target.partition_size
        if dims[0] > limit:
            fail("alloc.partition_limit", f"{buf.label} tensor {dims}: partition dim {dims[0]} > {limit}")
    hbm = state.target.hbm_bytes
    if not buf.on_chip and hbm is not None and math.prod(dims) * storage_dtype.itemsize > hbm:
        fail(
            "alloc.hbm_capacity",
            f"HBM tensor {dims} {dtype_name(storage_dtype)} > {hbm} bytes on {state.target.name}",
        )
    if zero:
        values = np.zeros(dims, dtype=storage_dtype)
    else:
        values = np.full(dims, fill_value(storage_dtype), dtype=storage_dtype)
    psum_state = np.full(dims, OTHER if zero else FRESH, np.uint8) if buf is PSUM else None
    record = _record(state, name, buf, dims, storage_dtype)
    if buf.on_chip:
        cap = capacity(state, buf)
        if record.bytes_per_partition > cap:
            fail(
                f"{buf.kind}.capacity",
                f"{record.describe()} needs {record.bytes_per_partition} bytes per partition "
                f"> {cap} ({state.target.name} {buf.label})",
            )
        state.records.append(record)
    return Tensor(Storage(values, psum_state, record), values, psum_state)


def wrap_input(array: np.ndarray[Any, Any], name: str) -> Tensor:
    """A kernel argument: the caller's array (used in place) as a shared-HBM tensor."""
    state = current()
    record = _record(state, name, SHARED_HBM, tuple(array.shape), array.dtype)
    record.line = 0
    return Tensor(Storage(array, None, record), array, None)
