"""Old-style value-returning helpers, kept for kernels written before ``dst=`` calls.

``nl.load`` / ``nl.store`` / ``nl.copy`` / ``nl.matmul`` / ``nl.transpose``, the math
operators called on tiles (``nl.exp(t)``, ``nl.add(a, b)``), the reductions
``nl.sum`` / ``nl.prod`` / ``nl.mean`` / ``nl.max`` / ``nl.min``, ``nl.broadcast_to``,
``t[...] = value`` and ``t += value``. Each allocates its result (SBUF; PSUM for
``nl.matmul`` and ``nl.transpose``) and applies the same checks as the ISA call it
stands for. Arithmetic follows numpy broadcasting.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from nkigym_graph.nki_sim import isa_enums
from nkigym_graph.nki_sim.alloc import allocate
from nkigym_graph.nki_sim.buffers import PSUM, SBUF
from nkigym_graph.nki_sim.dtypes import NKI_DTYPES, is_int, to_dtype
from nkigym_graph.nki_sim.instruction import instruction
from nkigym_graph.nki_sim.isa_matmul import matmul_into, transpose_into
from nkigym_graph.nki_sim.isa_move import dma_into
from nkigym_graph.nki_sim.mathops import MATH_OPS, MathOp
from nkigym_graph.nki_sim.operands import (
    as_f32,
    in_hbm,
    number,
    on_chip,
    tensor_arg,
    uses,
    write,
)
from nkigym_graph.nki_sim.state import fail
from nkigym_graph.nki_sim.tensor import Tensor, same_view

Array = np.ndarray[Any, Any]


def _result_dtype(dtype: Any, *operands: Any) -> Any:
    if dtype is not None:
        return dtype
    tensors = [t for t in operands if isinstance(t, Tensor)]
    return max((t.dtype for t in tensors), key=lambda d: d.itemsize)


_BF16, _F32 = NKI_DTYPES["bfloat16"], np.dtype(np.float32)
_WIDER_SIGNED: dict[int, np.dtype[Any]] = {1: np.dtype(np.int16), 2: np.dtype(np.int32), 4: _F32}
"""A signed type that holds an unsigned one of this item size (int64 is not on the
hardware, so int32 with uint32 widens to float32)."""


def _operand_dtype(operand: Any) -> np.dtype[Any]:
    """A tile's dtype, a typed numpy scalar's, or a weakly typed Python scalar's: the
    widest the hardware has of its kind (bool -> uint8, int -> int32, float -> float32)."""
    if isinstance(operand, Tensor):
        return operand.dtype
    found = to_dtype(operand.dtype) if isinstance(operand, np.generic) else None
    if found is not None:
        return found
    if isinstance(operand, bool | np.bool_):
        return np.dtype(np.uint8)
    if isinstance(operand, numbers.Integral):
        return np.dtype(np.int32)
    return _F32


def _promote(a: np.dtype[Any], b: np.dtype[Any]) -> np.dtype[Any]:
    """NKI's type promotion of two operand dtypes (the NKI documentation, "NKI Type
    Promotion"): a float with an integer is the float; two floats the wider, or a
    widened one (fp16 with bf16 -> fp32, fp8 e4m3 with e5m2 -> bf16); two integers the
    wider, or a signed one that holds both."""
    if a == b:
        return a
    if a == np.bool_ or b == np.bool_:  # a bool tile takes the other operand's type
        return b if a == np.bool_ else a
    a_float, b_float = not is_int(a), not is_int(b)
    if a_float != b_float:
        return a if a_float else b
    if a_float:
        if a.itemsize != b.itemsize:
            return a if a.itemsize > b.itemsize else b
        return _F32 if a.itemsize == 2 else _BF16  # same width, different formats
    a_signed, b_signed = bool(np.issubdtype(a, np.signedinteger)), bool(np.issubdtype(b, np.signedinteger))
    if a_signed == b_signed:
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a_signed else (b, a)
    return signed if signed.itemsize > unsigned.itemsize else _WIDER_SIGNED[unsigned.itemsize]


def _binary_dtype(dtype: Any, x: Any, y: Any) -> Any:
    """The dtype of ``nl.add(x, y)`` and friends: ``dtype`` when given, else the
    promotion of the operands' dtypes."""
    if dtype is not None:
        return dtype
    return _promote(_operand_dtype(x), _operand_dtype(y))


def _values(operand: Any, role: str) -> Any:
    if isinstance(operand, Tensor):
        on_chip(operand, role)
        uses(operand)
        return as_f32(operand)
    return np.float32(number(operand, role))


def _new(shape: tuple[int, ...], dtype: Any, buffer: Any = SBUF) -> Tensor:
    if len(shape) == 1:
        shape = (shape[0], 1)
    out = allocate(shape, dtype, buffer)
    uses(out)
    return out


@instruction("nl.load")
def load(src: Any, dtype: Any = None) -> Tensor:
    """A new SBUF tile holding ``src`` (DMA from HBM)."""
    source = in_hbm(src, "src")
    out = _new(source.shape, source.dtype if dtype is None else dtype)
    uses(source)
    dma_into(out, source)
    return out


@instruction("nl.store")
def store(dst: Any, value: Any) -> None:
    """DMA ``value`` (on chip) into ``dst`` (in HBM)."""
    out, source = in_hbm(dst, "dst"), on_chip(value, "value")
    uses(out, source)
    dma_into(out, source)


@instruction("nl.matmul")
def matmul(x: Any, y: Any, transpose_x: bool = False) -> Tensor:
    """A new float32 PSUM tile ``x @ y`` (``x.T @ y`` with ``transpose_x``)."""
    left, right = on_chip(x, "x"), on_chip(y, "y")
    uses(left, right)
    stationary = left
    if not transpose_x:
        stationary = _new(left.shape[::-1], left.dtype)
        write(stationary, left.data.T)
    out = _new((stationary.shape[1], right.shape[1]), np.float32, PSUM)
    matmul_into(out, stationary, right, accumulate=False)
    return out


@instruction("nl.transpose")
def transpose(x: Any, dtype: Any = None) -> Tensor:
    """A new PSUM tile with ``x``'s partition and free dims swapped."""
    source = on_chip(x, "x")
    uses(source)
    out = _new(source.shape[::-1], source.dtype, PSUM)
    transpose_into(out, source, isa_enums.engine.unknown)
    if dtype is not None and to_dtype(dtype) != out.dtype:
        cast = _new(out.shape, dtype)
        write(cast, as_f32(out))
        return cast
    return out


@instruction("nl.broadcast_to")
def broadcast_to(x: Any, shape: Any) -> Tensor:
    """A read-only view of ``x`` broadcast to ``shape`` (e.g. one partition to 128)."""
    source = tensor_arg(x, "x")
    target = tuple(int(d) for d in shape)
    try:
        data = np.broadcast_to(source.data, target)
    except ValueError:
        fail("view.reshape", f"cannot broadcast {source.shape} to {target}")
    state = None if source.psum_state is None else np.broadcast_to(source.psum_state, target)
    return Tensor(source.storage, data, state)


def _unary(op: MathOp, x: Any, dtype: Any = None) -> Any:
    assert op.unary is not None
    if not isinstance(x, Tensor):
        return op.unary(np.asarray(number(x, "x"), dtype=np.float32)).item()
    source = on_chip(x, "x")
    uses(source)
    out = _new(source.shape, _result_dtype(dtype, source))
    if op.name == "copy" and out.dtype == source.dtype:
        write(out, source.data)
    else:
        write(out, op.unary(as_f32(source)))
    return out


def _binary(op: MathOp, x: Any, y: Any, dtype: Any = None) -> Any:
    assert op.binary is not None
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        return op.binary(
            np.asarray(number(x, "x"), dtype=np.float32), np.asarray(number(y, "y"), dtype=np.float32)
        ).item()
    a, b = _values(x, "x"), _values(y, "y")
    try:
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    except ValueError:
        fail("dst.shape", f"operand shapes {np.shape(a)} and {np.shape(b)} do not broadcast")
    out = _new(tuple(shape), _binary_dtype(dtype, x, y))
    write(out, op.binary(a, b))
    return out


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    items = axis if isinstance(axis, tuple | list) else (axis,)
    try:
        axes = tuple(sorted({operator.index(a) % ndim for a in items}))
    except TypeError:
        fail("reduce.axis", f"axis {axis!r} must be an int or a list of ints")
    if 0 in axes:
        fail("reduce.partition_axis", "cannot reduce over the partition axis 0")
    return axes


_REDUCERS: dict[str, Callable[..., Any]] = {
    "sum": np.sum,
    "prod": np.prod,
    "mean": np.mean,
    "max": np.max,
    "min": np.min,
}


def _reduction(name: str, x: Any, axis: Any, dtype: Any = None, keepdims: bool = False) -> Tensor:
    source = on_chip(x, "x")
    uses(source)
    axes = _axes(axis, source.ndim)
    values = as_f32(source)
    result = np.asarray(_REDUCERS[name](values, axis=axes, keepdims=keepdims), dtype=np.float32)
    out = _new(result.shape, _result_dtype(dtype, source))
    write(out, result)
    return out


def _reduction_instruction(name: str) -> Callable[..., Tensor]:
    def run(x: Any, axis: Any, dtype: Any = None, keepdims: bool = False) -> Tensor:
        return _reduction(name, x, axis, dtype, keepdims)

    run.__name__ = name
    return instruction(f"nl.{name}")(run)


sum_ = _reduction_instruction("sum")
prod = _reduction_instruction("prod")
mean = _reduction_instruction("mean")
_REDUCE_CALLS = {"max": _reduction_instruction("max"), "min": _reduction_instruction("min")}
_OP_CALLS: dict[str, Callable[..., Any]] = {}


def call_math_op(op: MathOp, *args: Any, **kwargs: Any) -> Any:
    """``nl.exp(t)``, ``nl.add(a, b)``, ``nl.max(t, axis=1)``: the value-returning form."""
    if op.reduces_when_called:
        return _REDUCE_CALLS[op.name](*args, **kwargs)
    call = _OP_CALLS.get(op.name)
    if call is None:
        if op.unary is not None:

            def call_unary(x: Any, dtype: Any = None) -> Any:
                return _unary(op, x, dtype)

            call = instruction(f"nl.{op.name}")(call_unary)
        else:

            def call_binary(x: Any, y: Any, dtype: Any = None) -> Any:
                return _binary(op, x, y, dtype)

            call = instruction(f"nl.{op.name}")(call_binary)
        _OP_CALLS[op.name] = call
    return call(*args, **kwargs)


def elementwise(name: str, x: Any, y: Any) -> Tensor:
    """``a + b`` and friends on tensors."""
    result: Tensor = call_math_op(MATH_OPS[name], x, y)
    return result


def _update(target: Tensor, name: str, other: Any) -> Tensor:
    out = on_chip(target, "tensor")
    value = _values(other, "value")
    uses(out)
    op = MATH_OPS[name]
    assert op.binary is not None
    try:
        result = op.binary(as_f32(out), np.broadcast_to(value, out.shape))
    except ValueError:
        fail("dst.shape", f"cannot apply {np.shape(value)} to {out.shape} in place")
    write(out, result)
    return out


_UPDATES = {
    name: instruction(f"tensor {symbol}")(lambda target, other, _name=name: _update(target, _name, other))
    for name, symbol in (("add", "+="), ("subtract", "-="), ("multiply", "*="))
}


def update_in_place(target: Tensor, name: str, other: Any) -> Tensor:
    """``t += value`` (also ``-=``, ``*=``)."""
    result: Tensor = _UPDATES[name](target, other)
    return result


@instruction("tensor assignment")
def assign(target: Tensor, key: Any, value: Any) -> None:
    """``t[key] = value``: value is a tile (same elements per partition) or a number."""
    view = target[key]
    if isinstance(value, Tensor):
        uses(view, value)
        if same_view(view, value):
            return
        if value.data.size == view.data.size:
            write(view, value.data.reshape(view.shape))
            return
        try:
            write(view, np.broadcast_to(value.data, view.shape))
        except ValueError:
            fail("dst.shape", f"cannot assign a {value.shape} tile to a {view.shape} view")
        return
    if isinstance(value, numbers.Real | np.number):
        uses(view)
        write(view, np.asarray(value))
        return
    fail("operand.type", f"cannot assign {type(value).__name__} to an NKI tensor")
