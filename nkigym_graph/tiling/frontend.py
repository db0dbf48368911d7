"""The op functions a user writes tensor functions with.

On traced tensors (inside ``tile``) each call is recorded; on numpy arrays it is
computed at once with the op's own numpy semantics, so the same function gives the
reference result::

    def f(a, b):
        return activation(nc_matmul(a, b), op="tanh")

    f(a_array, b_array)                               # numpy result
    tile(f, {"a": (256, 128), "b": (256, 512)})       # tiled Program

>>> import numpy as np
>>> nc_matmul(np.ones((3, 2)), np.ones((3, 4))).shape
(2, 4)
>>> activation(np.zeros((1, 1)), op="tanhh")
Traceback (most recent call last):
  ...
nkigym_graph.tiling.errors.OpCallError: activation: op='tanhh' is not one of ['abs', 'copy', \
'exp', 'gelu', 'log', 'negative', 'reciprocal', 'relu', 'rsqrt', 'sigmoid', 'sqrt', 'square', 'tanh']
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from nkigym_graph.ir.ops import (
    ACTIVATION,
    NC_MATMUL,
    NC_TRANSPOSE,
    TENSOR_REDUCE,
    TENSOR_SCALAR,
    TENSOR_TENSOR,
)
from nkigym_graph.ir.ops.base import Op, ShapeError
from nkigym_graph.ir.statement import make_attrs
from nkigym_graph.tiling.errors import OpCallError
from nkigym_graph.tiling.trace import TracedTensor

Tensor = Any
"""A ``TracedTensor`` while tracing, otherwise anything ``numpy.asarray`` accepts."""

Scalar = float | np.floating[Any] | np.integer[Any]
"""A constant number (ints stay ints)."""


def nc_matmul(lhs: Tensor, rhs: Tensor) -> Tensor:
    """``lhs[K, M].T @ rhs[K, N]`` -> ``[M, N]``: contraction over dim 0 of both."""
    return _apply(NC_MATMUL, (lhs, rhs))


def nc_transpose(x: Tensor) -> Tensor:
    """``x[P, F]`` -> ``[F, P]``."""
    return _apply(NC_TRANSPOSE, (x,))


def activation(x: Tensor, op: str = "tanh") -> Tensor:
    """A named unary function applied elementwise (``tanh``, ``exp``, ``relu``, ...)."""
    return _apply(ACTIVATION, (x,), op=op)


def tensor_tensor(x: Tensor, y: Tensor, op: str = "add") -> Tensor:
    """A named binary function of two equal-shape tensors (``add``, ``maximum``, ...)."""
    return _apply(TENSOR_TENSOR, (x, y), op=op)


def tensor_scalar(x: Tensor, s: Scalar, op: str = "multiply") -> Tensor:
    """``op(x, s)`` elementwise for a constant number ``s``."""
    return _apply(TENSOR_SCALAR, (x,), scalar=_number(s), op=op)


def tensor_reduce(x: Tensor, op: str = "sum") -> Tensor:
    """Reduce the free axis: ``x[P, F]`` -> ``[P, 1]`` (``sum``, ``max``, ``min``)."""
    return _apply(TENSOR_REDUCE, (x,), op=op)


def _number(s: object) -> int | float:
    if isinstance(s, bool) or not isinstance(s, numbers.Real):
        raise OpCallError(f"tensor_scalar: the scalar must be a number, got {s!r}")
    return int(s) if isinstance(s, numbers.Integral) else float(s)


def _apply(op: Op, inputs: tuple[Tensor, ...], /, **attr_values: Any) -> Tensor:
    attrs = make_attrs(**attr_values)
    problem = op.check_attrs(attrs)
    if problem is not None:
        raise OpCallError(f"{op.name}: {problem}")
    traced = [x for x in inputs if isinstance(x, TracedTensor)]
    if traced:
        if len(traced) != len(inputs):
            raise OpCallError(
                f"{op.name}: cannot mix traced tensors and constant arrays; pass every "
                "tensor as a parameter of the traced function"
            )
        return traced[0].trace.record(op, inputs, attrs)
    arrays = [np.asarray(x) for x in inputs]
    for name, array in zip((op.operand_names[p] for p in op.read_positions), arrays, strict=True):
        if array.ndim != 2:
            raise OpCallError(f"{op.name}: operand {name} must be 2-D, got shape {array.shape}")
    try:
        op.output_shape([a.shape for a in arrays], attrs)
    except ShapeError as err:
        raise OpCallError(f"{op.name}: {err}") from None
    return op.compute(arrays, dict(attrs))
