"""How each tensor-level op becomes Buda ops ("micro-ops"), as tables.

A lowering is a short list of :class:`MicroSpec`; the last one's result is the op's
result. Operands are the op's own operands (:class:`Arg`, optionally read transposed),
earlier micro-ops of the same list (:class:`Step`) or constants (:mod:`.constants`).

- ``nc_matmul(lhs[K,M], rhs[K,N])`` is a Buda ``matmul`` of ``lhs`` transposed (in0 is
  ``[M,K]``) and ``rhs``; with the ``stacked`` attribute (``n``, :mod:`.stitched`) ``rhs``
  is read as its ``n`` column blocks stacked in rows and ``lhs`` transposed repeated ``n``
  times side by side;
- a row sum is a ``matmul`` with a column of ones (the device reduces with ``max`` only);
- ``tensor_scalar`` is a binary op with a constant input (Buda ops take no numbers);
- a ``[P, 1]`` column or ``[1, F]`` row operand (``tensor_column``, ``tensor_row``,
  ``activation``'s bias column) is input 1 of an ``add`` / ``subtract`` / ``multiply``
  spread by ``tile_broadcast`` and ``broadcast`` TMs (:mod:`.layout`), the only ops
  seed 004 allows a tile broadcast on;
- ``activation``'s ``scale`` and ``bias`` are a ``multiply`` and an ``add`` before the
  function;
- a mean is the row-sum matmul times ``1 / F``;
- names Buda lacks are compositions: ``rsqrt`` = ``reciprocal(sqrt)``, ``divide`` =
  ``multiply`` by a ``reciprocal``, ``minimum`` = ``-maximum(-x, -y)``, ``silu`` =
  ``x * sigmoid(x)``; ``relu`` is a ``datacopy`` with ``relu_en``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from .constants import ColumnOnes, Constant, Fill
from .layout import PLAIN, Layout
from .shapes import TILE


@dataclass(frozen=True)
class Arg:
    """Operand ``index`` of the tensor-level op (``transposed``: read it transposed, then
    laid out as ``layout`` says)."""

    index: int
    transposed: bool = False
    layout: Layout = PLAIN


@dataclass(frozen=True)
class Step:
    """The result of micro-op ``index`` of the same lowering."""

    index: int


MicroInput = Arg | Step | Constant


@dataclass(frozen=True)
class MicroSpec:
    """One Buda op: its type, operands and attributes."""

    type: str
    inputs: tuple[MicroInput, ...]
    attributes: tuple[tuple[str, Any], ...] = ()


Lowering = tuple[MicroSpec, ...]
Shapes = Sequence[tuple[int, int]]
NEG = Fill(-1.0)


def _unary(kind: str, **attributes: Any) -> Lowering:
    return (MicroSpec(kind, (Arg(0),), tuple(attributes.items())),)


def _binary(kind: str) -> Lowering:
    return (MicroSpec(kind, (Arg(0), Arg(1))),)


def _with(kind: str, constant: Constant) -> Lowering:
    return (MicroSpec(kind, (Arg(0), constant)),)


def _scalar(kind: str, scalar: float) -> Lowering:
    return _with(kind, Fill(scalar))


ACTIVATIONS: dict[str, Lowering] = {
    **{
        name: _unary(name)
        for name in ("exp", "log", "tanh", "sigmoid", "sqrt", "reciprocal", "square", "abs", "gelu")
    },
    "silu": (MicroSpec("sigmoid", (Arg(0),)), MicroSpec("multiply", (Arg(0), Step(0)))),
    "copy": _unary("datacopy"),
    "relu": _unary("datacopy", relu_en=True),  # Buda's relu is an output stage of another op
    "rsqrt": (MicroSpec("sqrt", (Arg(0),)), MicroSpec("reciprocal", (Step(0),))),
    "negative": _with("multiply", NEG),
}

TENSOR_TENSOR: dict[str, Lowering] = {
    **{name: _binary(name) for name in ("add", "subtract", "multiply", "maximum")},
    "divide": (MicroSpec("reciprocal", (Arg(1),)), MicroSpec("multiply", (Arg(0), Step(0)))),
    "minimum": (  # min(x, y) = -max(-x, -y)
        MicroSpec("multiply", (Arg(0), NEG)),
        MicroSpec("multiply", (Arg(1), NEG)),
        MicroSpec("maximum", (Step(0), Step(1))),
        MicroSpec("multiply", (Step(2), NEG)),
    ),
}

TENSOR_SCALAR: dict[str, Callable[[float], Lowering]] = {
    **{name: partial(_scalar, name) for name in ("add", "subtract", "multiply", "maximum")},
    "divide": lambda c: _with("multiply", Fill(1.0 / c)),
    "minimum": lambda c: (  # min(x, c) = -max(-x, -c)
        MicroSpec("multiply", (Arg(0), NEG)),
        MicroSpec("maximum", (Step(0), Fill(-c))),
        MicroSpec("multiply", (Step(1), NEG)),
    ),
}

SPREADABLE = frozenset({"add", "subtract", "multiply"})
"""Binary ops whose input 1 may be tile-broadcast (seed 004, general.1)."""


def _spread(kind: str, dim: str, shapes: Shapes) -> Lowering:
    """``kind(data, other)`` with ``other`` a column (``dim`` c) or row (r) spread over data."""
    if kind not in SPREADABLE:
        hint = "; for divide, multiply by a reciprocal" if kind == "divide" else ""
        raise ValueError(
            f"{kind} with a broadcast {'column' if dim == 'c' else 'row'} has no Buda form (a tile "
            f"broadcast feeds only {', '.join(sorted(SPREADABLE))}){hint}"
        )
    rows, cols = shapes[0]
    layout = Layout(spread=(dim, cols if dim == "c" else rows))
    return (MicroSpec(kind, (Arg(0), Arg(1, layout=layout))),)


def _then(before: Sequence[MicroSpec], after: Lowering) -> Lowering:
    """``after`` applied to the result of ``before`` (its ``Arg(0)`` reads that result)."""
    if not before:
        return after
    start = len(before)

    def moved(item: MicroInput) -> MicroInput:
        if isinstance(item, Arg) and item.index == 0:
            return Step(start - 1)
        if isinstance(item, Step):
            return Step(item.index + start)
        return item

    return (*before, *(MicroSpec(m.type, tuple(moved(i) for i in m.inputs), m.attributes) for m in after))


def _activation(attrs: Mapping[str, Any], shapes: Shapes, column: bool) -> Lowering:
    """``f(x * scale + bias)``: a ``multiply`` and an ``add`` (of a constant, or of the bias
    column spread along the rows) before the function."""
    function = _lookup(ACTIVATIONS, attrs["op"], "activation")
    before: list[MicroSpec] = []
    scale, bias = attrs.get("scale", 1.0), attrs.get("bias", 0.0)
    if scale != 1:
        before.append(MicroSpec("multiply", (Arg(0), Fill(float(scale)))))
    current: MicroInput = Step(len(before) - 1) if before else Arg(0)
    if column:
        spread = Arg(1, layout=Layout(spread=("c", shapes[0][1])))
        before.append(MicroSpec("add", (current, spread)))
    elif bias != 0:
        before.append(MicroSpec("add", (current, Fill(float(bias)))))
    return _then(before, function)


_REDUCE_MAX = (("dim", "c"), ("type", "max"))


def _reduce(kind: str, shapes: Shapes) -> Lowering:
    cols = shapes[0][1]
    if kind == "sum":
        return (MicroSpec("matmul", (Arg(0), ColumnOnes(cols))),)
    if kind == "mean":
        return (
            MicroSpec("matmul", (Arg(0), ColumnOnes(cols))),
            MicroSpec("multiply", (Step(0), Fill(1.0 / cols))),
        )
    if cols == 1:  # the maximum or minimum of one value is that value
        return (MicroSpec("datacopy", (Arg(0),)),)
    if cols % TILE:
        raise ValueError(
            f"a {kind} over {cols} columns (not a multiple of {TILE}) would include the tile padding"
        )
    if kind == "max":
        return (MicroSpec("reduce", (Arg(0),), _REDUCE_MAX),)
    return (  # min = -max(-x)
        MicroSpec("multiply", (Arg(0), NEG)),
        MicroSpec("reduce", (Step(0),), _REDUCE_MAX),
        MicroSpec("multiply", (Step(1), NEG)),
    )


def _lookup(table: Mapping[str, Any], name: str, what: str) -> Any:
    if name not in table:
        raise ValueError(f"{what} {name!r} has no Buda form; supported: {', '.join(sorted(table))}")
    return table[name]


def _matmul(attrs: Mapping[str, Any], shapes: Shapes) -> Lowering:
    blocks = int(attrs.get("stacked", 1))
    lhs = Arg(0, transposed=True, layout=Layout(repeat=blocks))
    return (MicroSpec("matmul", (lhs, Arg(1, layout=Layout(blocks=blocks)))),)


LOWERINGS: dict[str, Callable[[Mapping[str, Any], Shapes], Lowering]] = {
    "nc_matmul": _matmul,
    "activation": lambda attrs, shapes: _activation(attrs, shapes, column=False),
    "activation_bias": lambda attrs, shapes: _activation(attrs, shapes, column=True),
    "tensor_column": lambda attrs, shapes: _spread(attrs["op"], "c", shapes),
    "tensor_row": lambda attrs, shapes: _spread(attrs["op"], "r", shapes),
    "tensor_tensor": lambda attrs, shapes: _lookup(TENSOR_TENSOR, attrs["op"], "tensor_tensor"),
    "tensor_scalar": lambda attrs, shapes: _lookup(TENSOR_SCALAR, attrs["op"], "tensor_scalar")(
        float(attrs["scalar"])
    ),
    "tensor_reduce": lambda attrs, shapes: _reduce(attrs["op"], shapes),
}
"""Lowering per op name (``nc_transpose`` has none: it folds into the reading op)."""


def lower(op_name: str, attrs: Mapping[str, Any], shapes: Shapes) -> Lowering:
    """The micro-ops of one tensor-level op; ValueError says why there are none."""
    rule = LOWERINGS.get(op_name)
    if rule is None:
        raise ValueError(f"op {op_name!r} has no Buda lowering")
    return rule(attrs, shapes)
