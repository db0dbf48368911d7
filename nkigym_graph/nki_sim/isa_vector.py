"""Vector / Scalar / GpSimd Engine instructions.

``activation``, ``activation_reduce``, ``tensor_tensor``, ``tensor_scalar``,
``tensor_scalar_reduce``, ``scalar_tensor_tensor``, ``tensor_reduce``,
``tensor_tensor_scan`` and ``reciprocal``.
Inputs and outputs may be in SBUF or PSUM (never HBM); arithmetic runs in float32 and
is cast to ``dst.dtype`` on write. Scalar operands are numbers or [P, 1] tiles that
broadcast along the free dims.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from nkigym_graph.nki_sim import isa_enums
from nkigym_graph.nki_sim.instruction import instruction
from nkigym_graph.nki_sim.mathops import MATH_OPS, MathOp
from nkigym_graph.nki_sim.operands import (
    as_f32,
    check_dst,
    compute_values,
    engine_allows_psum,
    layout,
    on_chip,
    op_arg,
    same_layout,
    scalar_operand,
    uses,
    write,
)
from nkigym_graph.nki_sim.state import current, fail
from nkigym_graph.nki_sim.tensor import Tensor

Array = np.ndarray[Any, Any]


def _apply_scalar(op: MathOp, data: Array, operand: Any, reverse: bool) -> Array:
    assert op.binary is not None
    return op.binary(operand, data) if reverse else op.binary(data, operand)


def activate(dst: Tensor, op: MathOp, data: Tensor, bias: Any, scale: Any) -> Array:
    """``dst = op(data * scale + bias)``; returns the activated fp32 values."""
    p, f = layout(data)
    check_dst(dst, p, f, f"data {data.shape}")
    x = as_f32(data)
    scale_v = scalar_operand(scale, p, data.ndim, "scale")
    if not (isinstance(scale_v, np.floating) and scale_v == 1.0):
        x = x * scale_v
    if bias is not None:
        x = x + scalar_operand(bias, p, data.ndim, "bias")
    assert op.unary is not None
    result = np.asarray(op.unary(x), dtype=np.float32)
    write(dst, result)
    return result


def _reduce_into_registers(result: Array, reduce_op: Any, reduce_res: Any, cmd: Any) -> None:
    commands = isa_enums.reduce_cmd
    if not isinstance(cmd, commands):
        fail("activation.reduce", f"reduce_cmd must be an nisa.reduce_cmd, got {cmd!r}")
    if cmd in (commands.reduce, commands.reset_reduce) and reduce_op is not MATH_OPS["add"]:
        fail("activation.reduce", f"reduce_op must be nl.add, got {reduce_op!r}")
    regs = current().scalar_regs
    p = result.shape[0]
    if cmd is commands.reset:
        regs[:p] = 0.0
    elif cmd is commands.reduce:
        regs[:p] += result.reshape(p, -1).sum(axis=1, dtype=np.float32)
    elif cmd is commands.reset_reduce:
        regs[:p] = result.reshape(p, -1).sum(axis=1, dtype=np.float32)
    if reduce_res is not None:
        res = on_chip(reduce_res, "reduce_res")
        if layout(res) != (p, 1):
            fail("activation.reduce", f"reduce_res {res.shape} must be [{p}, 1]")
        uses(res)
        write(res, regs[:p].copy())


@instruction("nisa.activation")
def activation(
    dst: Any,
    op: Any,
    data: Any,
    bias: Any = None,
    scale: Any = 1.0,
    reduce_op: Any = None,
    reduce_res: Any = None,
    reduce_cmd: Any = isa_enums.reduce_cmd.idle,
    name: Any = None,
) -> None:
    """``dst = op(data * scale + bias)`` on the Scalar Engine, with the optional free-dim
    sum into the engine's reduction registers (``reduce_cmd``) and ``reduce_res``."""
    out, src = on_chip(dst, "dst"), on_chip(data, "data")
    uses(out, src)
    result = activate(out, op_arg(op, "op", unary=True), src, bias, scale)
    _reduce_into_registers(result, reduce_op, reduce_res, reduce_cmd)


@instruction("nisa.activation_reduce")
def activation_reduce(
    dst: Any,
    op: Any,
    data: Any,
    reduce_op: Any,
    reduce_res: Any,
    bias: Any = None,
    scale: Any = 1.0,
    name: Any = None,
) -> None:
    """``activation`` that also writes the free-dim sum to ``reduce_res`` ([P, 1])."""
    out, src = on_chip(dst, "dst"), on_chip(data, "data")
    uses(out, src)
    result = activate(out, op_arg(op, "op", unary=True), src, bias, scale)
    if reduce_res is None:
        fail("activation.reduce", "reduce_res is required")
    _reduce_into_registers(result, reduce_op, reduce_res, isa_enums.reduce_cmd.reset_reduce)


@instruction("nisa.reciprocal")
def reciprocal(dst: Any, data: Any, name: Any = None) -> None:
    """``dst = 1 / data``."""
    out, src = on_chip(dst, "dst"), on_chip(data, "data")
    uses(out, src)
    activate(out, MATH_OPS["reciprocal"], src, None, 1.0)


@instruction("nisa.tensor_tensor")
def tensor_tensor(
    dst: Any, data1: Any, data2: Any, op: Any, engine: Any = isa_enums.engine.unknown, name: Any = None
) -> None:
    """``dst = data1 <op> data2`` element-wise; inputs share their layout and are not both
    in PSUM."""
    out, a, b = on_chip(dst, "dst"), on_chip(data1, "data1"), on_chip(data2, "data2")
    uses(out, a, b)
    fn = op_arg(op, "op", binary=True)
    if a.buffer.kind == "psum" and b.buffer.kind == "psum":
        fail("tensor_tensor.both_psum", "data1 and data2 cannot both be in PSUM")
    same_layout(a, b, "tensor_tensor.layout", "data1 and data2")
    gpsimd = engine if fn.name != "power" else isa_enums.engine.gpsimd
    engine_allows_psum(gpsimd, out, a, b)
    check_dst(out, *layout(a), f"data1 {a.shape}")
    x, y = compute_values([a, b], out, fn)
    assert fn.binary is not None
    write(out, fn.binary(x, y.reshape(x.shape)))


@instruction("nisa.tensor_scalar")
def tensor_scalar(
    dst: Any,
    data: Any,
    op0: Any,
    operand0: Any,
    reverse0: bool = False,
    op1: Any = None,
    operand1: Any = None,
    reverse1: bool = False,
    engine: Any = isa_enums.engine.unknown,
    name: Any = None,
) -> None:
    """``dst = (data <op0> operand0) <op1> operand1``; operands are numbers or [P, 1]."""
    out, src = on_chip(dst, "dst"), on_chip(data, "data")
    uses(out, src)
    engine_allows_psum(engine, out, src)
    first = op_arg(op0, "op0", binary=True)
    if (op1 is None) != (operand1 is None):
        fail("tensor_scalar.op1", "op1 and operand1 must be given together")
    p, f = layout(src)
    check_dst(out, p, f, f"data {src.shape}")
    (x,) = compute_values([src], out, first)
    integer = bool(np.issubdtype(x.dtype, np.integer))
    operand = scalar_operand(operand0, p, src.ndim, "operand0", integer)
    result = _apply_scalar(first, x, operand, reverse0)
    if op1 is not None:
        second = op_arg(op1, "op1", binary=True)
        if second.bitvec != first.bitvec:
            fail("op.invalid", "op0 and op1 must both be arithmetic or both bit-vector")
        operand = scalar_operand(operand1, p, src.ndim, "operand1", integer)
        result = _apply_scalar(second, result, operand, reverse1)
    write(out, result)


TENSOR_SCALAR_REDUCERS = frozenset({"add", "multiply", "max", "maximum", "min", "minimum"})
"""The ``reduce_op`` s ``tensor_scalar_reduce`` takes (NKI: ``nl.add``, ``nl.multiply``,
``nl.max``, ``nl.min``; ``nl.maximum`` / ``nl.minimum`` reduce alike)."""


@instruction("nisa.tensor_scalar_reduce")
def tensor_scalar_reduce(
    dst: Any,
    data: Any,
    op0: Any,
    operand0: Any,
    reduce_op: Any,
    reduce_res: Any,
    reverse0: bool = False,
    name: Any = None,
) -> None:
    """``dst = data <op0> operand0`` on the Vector Engine, and ``reduce_res`` ([P, 1]) the
    ``reduce_op`` of each partition's results (before the cast to ``dst.dtype``): one pass
    that, for example, copies scores out of PSUM and takes their row maximum."""
    out, src = on_chip(dst, "dst"), on_chip(data, "data")
    res = on_chip(reduce_res, "reduce_res")
    uses(out, src, res)
    first = op_arg(op0, "op0", binary=True)
    if first.bitvec:
        fail("tensor_scalar_reduce.op", f"op0 must be an arithmetic operator, got {first.name}")
    reducer = op_arg(reduce_op, "reduce_op", reducer=True)
    if reducer.name not in TENSOR_SCALAR_REDUCERS:
        fail(
            "tensor_scalar_reduce.op",
            f"reduce_op must be nl.add, nl.multiply, nl.max or nl.min, got {reducer.name}",
        )
    p, f = layout(src)
    check_dst(out, p, f, f"data {src.shape}")
    if layout(res) != (p, 1):
        fail("tensor_scalar_reduce.reduce_res", f"reduce_res {res.shape} must be [{p}, 1]")
    x = as_f32(src)
    result = np.asarray(
        _apply_scalar(first, x, scalar_operand(operand0, p, src.ndim, "operand0"), reverse0), dtype=np.float32
    )
    write(out, result)
    assert reducer.reducer is not None
    write(res, reducer.reducer.reduce(result.reshape(p, -1), axis=1).reshape(p, 1))


@instruction("nisa.scalar_tensor_tensor")
def scalar_tensor_tensor(
    dst: Any,
    data: Any,
    op0: Any,
    operand0: Any,
    op1: Any,
    operand1: Any,
    reverse0: bool = False,
    reverse1: bool = False,
    name: Any = None,
) -> None:
    """``dst = (data <op0> operand0) <op1> operand1`` with operand1 a tile like data."""
    out, src = on_chip(dst, "dst"), on_chip(data, "data")
    other = on_chip(operand1, "operand1")
    uses(out, src, other)
    first, second = op_arg(op0, "op0", binary=True), op_arg(op1, "op1", binary=True)
    if src.buffer.kind == "psum" and other.buffer.kind == "psum":
        fail("tensor_tensor.both_psum", "data and operand1 cannot both be in PSUM")
    same_layout(src, other, "tensor_tensor.layout", "data and operand1")
    p, f = layout(src)
    check_dst(out, p, f, f"data {src.shape}")
    x, y = compute_values([src, other], out, first)
    integer = bool(np.issubdtype(x.dtype, np.integer))
    tmp = _apply_scalar(first, x, scalar_operand(operand0, p, src.ndim, "operand0", integer), reverse0)
    write(out, _apply_scalar(second, tmp, y.reshape(x.shape), reverse1))


def reduce_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` as the trailing contiguous free axes it must be."""
    items = axis if isinstance(axis, tuple | list) else (axis,)
    try:
        axes = tuple(sorted({operator.index(a) for a in items}))
    except TypeError:
        fail("reduce.axis", f"axis {axis!r} must be an int or a list of ints")
    if not axes:
        fail("reduce.axis", "axis must name at least one free axis")
    if 0 in axes:
        fail("reduce.partition_axis", "cannot reduce over the partition axis 0")
    if axes != tuple(range(ndim - len(axes), ndim)):
        fail(
            "reduce.axis",
            f"axis {list(axes)} of a {ndim}-D tile: reduction axes must be the "
            f"last contiguous free axes (e.g. [{ndim - 1}])",
        )
    return axes


@instruction("nisa.tensor_reduce")
def tensor_reduce(
    dst: Any, op: Any, data: Any, axis: Any, negate: bool = False, keepdims: bool = False, name: Any = None
) -> None:
    """``dst = op.reduce(data, axis)`` over trailing free axes (``-`` the result if negate)."""
    out, src = on_chip(dst, "dst"), on_chip(data, "data")
    uses(out, src)
    fn = op_arg(op, "op", reducer=True)
    axes = reduce_axes(axis, src.ndim)
    (x,) = compute_values([src], out, fn)
    kept = src.shape[: src.ndim - len(axes)]
    assert fn.reducer is not None
    result = fn.reducer.reduce(x.reshape((*kept, -1)), axis=-1)
    if negate:
        result = -result
    check_dst(out, src.shape[0], math.prod(kept[1:]), f"the reduction of {src.shape} over {axes}")
    write(out, result)


@instruction("nisa.tensor_tensor_scan")
def tensor_tensor_scan(
    dst: Any,
    data0: Any,
    data1: Any,
    initial: Any,
    op0: Any,
    op1: Any,
    reverse0: bool = False,
    reverse1: bool = False,
    name: Any = None,
) -> None:
    """Along the free dim: ``out[i] = (out[i-1] <op0> data0[i]) <op1> data1[i]``, with
    ``out[-1] = initial`` (a number or a [P, 1] tile)."""
    out, a, b = on_chip(dst, "dst"), on_chip(data0, "data0"), on_chip(data1, "data1")
    uses(out, a, b)
    first, second = op_arg(op0, "op0", binary=True), op_arg(op1, "op1", binary=True)
    same_layout(a, b, "tensor_tensor.layout", "data0 and data1")
    p, f = layout(a)
    check_dst(out, p, f, f"data0 {a.shape}")
    x, y = as_f32(a).reshape(p, f), as_f32(b).reshape(p, f)
    prev = np.broadcast_to(scalar_operand(initial, p, 2, "initial"), (p, 1))[:, 0]
    result = np.empty((p, f), dtype=np.float32)
    for i in range(f):
        prev = _apply_scalar(second, _apply_scalar(first, x[:, i], prev, not reverse0), y[:, i], reverse1)
        result[:, i] = prev
    write(out, result)
