"""Operand checks and data access shared by the instructions.

The layout of an on-chip operand is ``(partitions, elements per partition)``; most
instructions compare operands and destinations by layout, as the NKI documentation
states ("same partition axis size and same number of elements per partition").
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from nkigym_graph.nki_sim.dtypes import is_int
from nkigym_graph.nki_sim.mathops import MathOp
from nkigym_graph.nki_sim.state import current, fail
from nkigym_graph.nki_sim.tensor import Tensor, mark_written, touch

Array = np.ndarray[Any, Any]


def tensor_arg(value: Any, role: str) -> Tensor:
    """``value`` as a tensor, or fail ``operand.type``."""
    if not isinstance(value, Tensor):
        fail("operand.type", f"{role} must be an NKI tensor, got {type(value).__name__}")
    return value


def on_chip(value: Any, role: str) -> Tensor:
    """An SBUF or PSUM tensor of rank >= 2."""
    tensor = tensor_arg(value, role)
    if not tensor.buffer.on_chip:
        fail("operand.buffer", f"{role} must be in SBUF or PSUM, not {tensor.buffer.label}")
    if tensor.ndim < 2:
        fail("operand.rank", f"{role} has shape {tensor.shape}; on-chip tiles need 2+ dims")
    return tensor


def in_hbm(value: Any, role: str) -> Tensor:
    """A tensor in device memory (HBM)."""
    tensor = tensor_arg(value, role)
    if tensor.buffer.on_chip:
        fail("operand.buffer", f"{role} must be in HBM, not {tensor.buffer.label}")
    return tensor


def layout(tensor: Tensor) -> tuple[int, int]:
    """``(partitions, elements per partition)``."""
    shape = tensor.shape
    return shape[0], math.prod(shape[1:])


def check_dst(dst: Tensor, partitions: int, elements: int, what: str) -> None:
    """``dst`` must hold ``partitions`` x ``elements`` like the result (``dst.shape``)."""
    got = layout(dst)
    if got != (partitions, elements):
        fail(
            "dst.shape",
            f"dst {dst.shape} ({got[0]} partitions x {got[1]} elements) does not "
            f"match {what} ({partitions} partitions x {elements} elements)",
        )


def same_layout(first: Tensor, second: Tensor, rule: str, what: str) -> None:
    if layout(first) != layout(second):
        fail(rule, f"{what}: {first.shape} and {second.shape} differ in partitions or elements per partition")


def as_f32(tensor: Tensor) -> Array:
    """The operand's values in float32 (a view when already float32)."""
    return np.asarray(tensor.data, dtype=np.float32)


def compute_values(tensors: list[Tensor], dst: Tensor, op: MathOp) -> list[Array]:
    """Operand values in the engine's compute type: integers stay integers for bit-vector
    ops and when every operand and dst are integers; otherwise float32."""
    ints = all(is_int(t.dtype) for t in tensors) and is_int(dst.dtype)
    if op.bitvec:
        if not ints:
            fail("dtype.bitvec", f"bit-vector op {op!r} needs integer operands and dst")
        return [t.data for t in tensors]
    if ints:
        return [t.data.astype(np.int64) for t in tensors]
    return [as_f32(t) for t in tensors]


def number(value: Any, role: str) -> float | int:
    """A Python/numpy number (ints stay ints), or fail ``operand.value``."""
    if isinstance(value, numbers.Integral | np.integer | np.bool_):
        return int(value)
    if isinstance(value, numbers.Real | np.floating):
        return float(value)
    fail("operand.value", f"{role} must be a number, got {type(value).__name__}")


def scalar_operand(value: Any, partitions: int, ndim: int, role: str, integer: bool = False) -> Any:
    """A compile-time number, or a [P, 1] tile broadcast along the free dims; integers
    stay integers when the instruction computes in integers."""
    if isinstance(value, Tensor):
        if value.buffer.on_chip and layout(value) == (partitions, 1) and value.ndim >= 2:
            touch(current().step, value)
            data = value.data.astype(np.int64) if integer else as_f32(value)
            return data.reshape((partitions,) + (1,) * (ndim - 1))
        fail(
            "scalar.operand",
            f"{role} tile {value.shape} in {value.buffer.label} must be an on-chip [{partitions}, 1] vector",
        )
    if isinstance(value, numbers.Real | np.number) and not isinstance(value, bool | np.bool_):
        if integer and float(value).is_integer():
            return np.int64(round(float(value)))
        return np.float32(value)
    fail("scalar.operand", f"{role} must be a number or a [{partitions}, 1] tile, got {type(value).__name__}")


def op_arg(
    value: Any, role: str, *, unary: bool = False, binary: bool = False, reducer: bool = False
) -> MathOp:
    """An NKI operator usable the way the instruction needs it (``op.invalid``)."""
    if not isinstance(value, MathOp):
        fail("op.invalid", f"{role} must be an nl operator such as nl.add, got {value!r}")
    if (
        (unary and value.unary is None)
        or (binary and value.binary is None)
        or (reducer and value.reducer is None)
    ):
        kind = "an activation function" if unary else "a reduction" if reducer else "a binary"
        fail("op.invalid", f"{role}={value!r} is not {kind} operator")
    return value


def write(dst: Tensor, values: Any) -> None:
    """Store ``values`` (cast to dst's dtype) into ``dst``; marks PSUM as non-matmul written."""
    out = dst.data
    if not out.flags.writeable:
        fail("operand.readonly", f"dst {dst.shape} is a read-only view")
    result = np.asarray(values)
    if result.ndim and result.shape != out.shape:
        result = result.reshape(out.shape)
    out[...] = result
    mark_written(dst)


def uses(*tensors: Tensor) -> None:
    """Record that the running instruction reads or writes these tensors."""
    touch(current().step, *tensors)


def engine_allows_psum(engine: Any, *tensors: Tensor) -> None:
    """GpSimd cannot access PSUM (``engine.psum``)."""
    if getattr(engine, "name", None) == "gpsimd" and any(t.buffer.kind == "psum" for t in tensors):
        fail("engine.psum", "the GpSimd engine cannot access PSUM")
