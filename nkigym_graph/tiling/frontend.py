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
'exp', 'gelu', 'log', 'negative', 'reciprocal', 'relu', 'rsqrt', 'sigmoid', 'silu', 'sqrt', \
'square', 'tanh']

Broadcasting: the second tensor of ``tensor_tensor`` or ``tensor_scalar`` may be a
``[P, 1]`` column (one value per row, spread along the row) or a ``[1, F]`` row (spread
over the rows), and ``activation``'s ``bias`` a number or a ``[P, 1]`` column:

>>> x = np.arange(6.0).reshape(2, 3)
>>> tensor_tensor(x, tensor_reduce(x, op="max"), op="subtract")
array([[-2., -1.,  0.],
       [-2., -1.,  0.]])
>>> tensor_scalar(x, np.array([[1.0, 10.0, 100.0]]), op="multiply")
array([[  0.,  10., 200.],
       [  3.,  40., 500.]])
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from nkigym_graph.ir.ops import (
    ACTIVATION,
    ACTIVATION_BIAS,
    AFFINE_SELECT,
    NC_MATMUL,
    NC_TRANSPOSE,
    TENSOR_COLUMN,
    TENSOR_REDUCE,
    TENSOR_ROW,
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


def activation(x: Tensor, op: str = "tanh", scale: Scalar = 1.0, bias: Scalar | Tensor = 0.0) -> Tensor:
    """``op(x * scale + bias)`` elementwise (``tanh``, ``exp``, ``gelu``, ``rsqrt``, ...).

    ``scale`` is a finite number, ``bias`` a number or a ``[P, 1]`` column."""
    if _is_number(bias):
        return _apply(ACTIVATION, (x,), op=op, scale=_number(scale, "scale"), bias=_number(bias, "bias"))
    if not _is_tensor(bias):
        raise OpCallError(f"activation: bias must be a number or a [P, 1] tensor, got {bias!r}")
    return _apply(ACTIVATION_BIAS, (x, bias), op=op, scale=_number(scale, "scale"))


def tensor_tensor(x: Tensor, y: Tensor, op: str = "add") -> Tensor:
    """A named binary function of two tensors (``add``, ``maximum``, ...), broadcasting.

    ``y`` has ``x``'s shape, or is a ``[P, 1]`` column or ``[1, F]`` row spread over ``x``
    (either order for the commutative functions)."""
    return _binary("tensor_tensor", x, y, op)


def tensor_scalar(x: Tensor, s: Scalar | Tensor, op: str = "multiply") -> Tensor:
    """``op(x, s)`` elementwise for a number ``s``, or a ``[P, 1]`` / ``[1, F]`` tensor ``s``.

    A tensor ``s`` is a column or a row of ``x``, spread over it; a tensor of ``x``'s own
    shape is refused (``tensor_tensor`` takes two tensors elementwise)."""
    if _is_number(s):
        return _apply(TENSOR_SCALAR, (x,), scalar=_number(s, "the scalar"), op=op)
    if not _is_tensor(s):
        raise OpCallError(f"tensor_scalar: the scalar must be a number or a tensor, got {s!r}")
    return _binary("tensor_scalar", x, s, op)


def tensor_reduce(x: Tensor, op: str = "sum") -> Tensor:
    """Reduce the free axis: ``x[P, F]`` -> ``[P, 1]`` (``sum``, ``max``, ``min``, ``mean``)."""
    return _apply(TENSOR_REDUCE, (x,), op=op)


def affine_select(
    x: Tensor,
    offset: int = 0,
    channel_multiplier: int = 1,
    step: int = -1,
    cmp: str = "greater_equal",
    fill: Scalar = float("-inf"),
) -> Tensor:
    """Keep ``x[i, j]`` where ``cmp(offset + channel_multiplier*i + step*j, 0)``, else ``fill``.

    The defaults are the causal mask (keep ``j <= i + offset``, ``-inf`` above)::

        >>> affine_select(np.zeros((2, 3)))
        array([[  0., -inf, -inf],
               [  0.,   0., -inf]])
    """
    return _apply(
        AFFINE_SELECT,
        (x,),
        offset=offset,
        channel_multiplier=channel_multiplier,
        step=step,
        cmp=cmp,
        fill=_number(fill, "fill"),
    )


COMMUTATIVE = frozenset({"add", "multiply", "maximum", "minimum"})
"""Binary functions whose operands may be swapped (a broadcast operand given first)."""


def _binary(name: str, x: Tensor, y: Tensor, op: str) -> Tensor:
    """``op(x, y)`` with equal shapes, or ``y`` broadcast (``x`` for a commutative ``op``)."""
    xs, ys = _shape_of(x), _shape_of(y)
    form = None if xs == ys and name == "tensor_tensor" else _broadcast_form(xs, ys)
    if form is None and xs != ys and _broadcast_form(ys, xs) is not None:
        if op not in COMMUTATIVE:
            raise OpCallError(
                f"{name}: the {xs} operand is spread over the {ys} one only as the second "
                f"operand; for {op}, the broadcast operand must come second"
            )
        x, y, xs, ys = y, x, ys, xs
        form = _broadcast_form(xs, ys)
    if form is not None:
        return _apply(form, (x, y), op=op)
    if name == "tensor_tensor":
        return _apply(TENSOR_TENSOR, (x, y), op=op)  # equal shapes, or the size mismatch error
    if xs == ys:
        raise OpCallError(
            f"{name}: the scalar operand is a number, a [P, 1] column or a [1, F] row of x, got a "
            f"tensor of x's shape {xs}; for an elementwise op of two tensors use "
            f"tensor_tensor(x, y, op={op!r})"
        )
    raise OpCallError(
        f"{name}: a tensor operand of shape {ys} does not broadcast over {xs}; it must be a "
        "[P, 1] column or a [1, F] row of it"
    )


def _broadcast_form(data: tuple[int, ...], other: tuple[int, ...]) -> Op | None:
    """The op spreading ``other`` over ``data``: a ``[P, 1]`` column or a ``[1, F]`` row."""
    if len(data) != 2 or len(other) != 2:
        return None
    if other == (data[0], 1):
        return TENSOR_COLUMN
    if other == (1, data[1]):
        return TENSOR_ROW
    return None


def _shape_of(x: Tensor) -> tuple[int, ...]:
    return x.shape if isinstance(x, TracedTensor) else tuple(np.shape(x))


def _is_tensor(s: object) -> bool:
    """Whether ``s`` may be a tensor operand (a traced tensor, or an array numpy reads)."""
    return isinstance(s, TracedTensor | np.ndarray | list | tuple)


def _is_number(s: object) -> bool:
    return isinstance(s, numbers.Real) and not isinstance(s, bool)


def _number(s: object, what: str) -> int | float:
    if not _is_number(s):
        raise OpCallError(f"{what} must be a number, got {s!r}")
    return int(s) if isinstance(s, numbers.Integral) else float(s)  # type: ignore[arg-type]


def _apply(op: Op, inputs: tuple[Tensor, ...], /, **attr_values: Any) -> Tensor:
    attrs = op.canonical_attrs(make_attrs(**attr_values))
    problem = op.check_attrs(attrs)
    if problem is not None:
        raise OpCallError(f"{op.text}: {problem}")
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
            raise OpCallError(f"{op.text}: operand {name} must be 2-D, got shape {array.shape}")
    try:
        op.output_shape([a.shape for a in arrays], attrs)
    except ShapeError as err:
        raise OpCallError(f"{op.text}: {err}") from None
    return op.compute(arrays, dict(attrs))
