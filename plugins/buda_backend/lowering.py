"""How each tensor-level op becomes Buda ops ("micro-ops"), as tables.

A lowering is a short list of :class:`MicroSpec`; the last one's result is the op's
result. Operands are the op's own operands (:class:`Arg`, optionally read transposed),
earlier micro-ops of the same list (:class:`Step`) or constants (:mod:`.constants`).

- ``nc_matmul(lhs[K,M], rhs[K,N])`` is a Buda ``matmul`` of ``lhs`` transposed (in0 is
  ``[M,K]``) and ``rhs``; with the ``stacked`` attribute (``n``, :mod:`.stitched`) ``rhs``
  is read as its ``n`` column blocks stacked in rows and ``lhs`` transposed repeated ``n``
  times side by side;
- a row sum is a ``matmul`` with a column of ones (the device reduces with ``max`` only);
- a row maximum is a ``reduce``; over a number of columns that is not a multiple of the
  tile width, its operand is first multiplied by a mask of ones (zeros in the tile
  padding) and added to a mask of zeros (the lowest value in the padding), so whatever
  the padding held it cannot be the maximum (:class:`~.constants.PaddingMask`); a minimum
  is ``-max(-x)``, the ``-1`` folded into the first mask;
- ``tensor_scalar`` is a binary op with a constant input (Buda ops take no numbers);
- a ``[P, 1]`` column or ``[1, F]`` row operand (``tensor_column``, ``tensor_row``,
  ``activation``'s bias column) is input 1 of an ``add`` / ``subtract`` / ``multiply``
  spread by ``tile_broadcast`` and ``broadcast`` TMs (:mod:`.layout`), the only ops
  seed 004 allows a tile broadcast on. Dividing by it multiplies by its ``reciprocal``
  (computed on the column or row, :attr:`Arg.through`, then spread); ``maximum`` runs on
  the SFPU, which takes no broadcast operand, so it reads the operand spread into a
  whole tensor by a ``multiply`` with a constant one (``minimum``: ``-max(-x, -y)``,
  spread by multiplying with ``-1``);
- ``activation``'s ``scale`` and ``bias`` are a ``multiply`` and an ``add`` before the
  function;
- a mean is the row-sum matmul times ``1 / F``;
- names Buda lacks are compositions: ``rsqrt`` = ``reciprocal(sqrt)``, ``divide`` =
  ``multiply`` by a ``reciprocal``, ``minimum`` = ``-maximum(-x, -y)``, ``silu`` =
  ``x * sigmoid(x)``; ``relu`` is a ``datacopy`` with ``relu_en``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from .constants import ColumnOnes, Constant, Fill, PaddingMask
from .layout import PLAIN, Layout
from .padding import REAL
from .shapes import TILE


@dataclass(frozen=True)
class Arg:
    """Operand ``index`` of the tensor-level op (``transposed``: read it transposed;
    ``through``: read the result of that one-input Buda op on it, computed once as an op
    of its own; then laid out as ``layout`` says)."""

    index: int
    transposed: bool = False
    layout: Layout = PLAIN
    through: str | None = None


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


def _whole(other: Arg, sign: float, always: bool) -> list[MicroSpec]:
    """Micro-ops making ``sign * other`` (a spread column or row) a whole tensor. Over an
    axis that ends inside a tile the spread would copy real values into the tile padding,
    where an op on them (``exp(x - max)`` of a very negative maximum) can overflow and
    spoil a later sum over the padding: a mask multiply and add put ``sign * REAL`` there,
    the value :func:`~.padding.check_padding` checks. Otherwise the reader takes the
    spread as its input 1 (no micro-ops), unless ``always`` (a ``multiply`` by ``sign``)."""
    assert other.layout.spread is not None
    dim, size = other.layout.spread
    if size % TILE:
        return [
            MicroSpec("multiply", (PaddingMask(dim, size, sign, 0.0), other)),
            MicroSpec("add", (Step(0), PaddingMask(dim, size, 0.0, sign * REAL))),
        ]
    return [MicroSpec("multiply", (Fill(sign), other))] if always or sign != 1 else []


def _spread_binary(kind: str, other: Arg) -> Lowering:
    """``kind(data, other)`` for an op that takes a tile broadcast on input 1."""
    steps = _whole(other, 1.0, always=False)
    return (*steps, MicroSpec(kind, (Arg(0), Step(len(steps) - 1) if steps else other)))


def _spread_maximum(sign: float, other: Arg) -> Lowering:
    """``sign * max(sign * data, sign * other)``: the maximum (``sign`` 1) or the minimum
    (-1). ``maximum`` runs on the SFPU, which takes no broadcast operand, so ``other`` is
    spread into a whole tensor first (:func:`_whole`)."""
    steps = _whole(other, sign, always=True)
    spread, n = Step(len(steps) - 1), len(steps)
    if sign == 1:
        return (*steps, MicroSpec("maximum", (Arg(0), spread)))
    return (
        *steps,
        MicroSpec("multiply", (Arg(0), NEG)),
        MicroSpec("maximum", (Step(n), spread)),
        MicroSpec("multiply", (Step(n + 1), NEG)),
    )


SPREAD: dict[str, Callable[[Arg], Lowering]] = {
    **{name: partial(_spread_binary, name) for name in SPREADABLE},
    "divide": lambda other: _spread_binary("multiply", replace(other, through="reciprocal")),
    "maximum": partial(_spread_maximum, 1.0),
    "minimum": partial(_spread_maximum, -1.0),
}
"""Lowering per binary op of ``op(data, other)`` with ``other`` a spread column or row."""


def _spread(kind: str, dim: str, shapes: Shapes) -> Lowering:
    """``kind(data, other)`` with ``other`` a column (``dim`` c) or row (r) spread over data."""
    rule = _lookup(SPREAD, kind, f"tensor_{'column' if dim == 'c' else 'row'}")
    rows, cols = shapes[0]
    return rule(Arg(1, layout=Layout(spread=(dim, cols if dim == "c" else rows))))


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
    column spread along the rows, :func:`_whole`) before the function."""
    function = _lookup(ACTIVATIONS, attrs["op"], "activation")
    spread = Arg(1, layout=Layout(spread=("c", shapes[0][1])))
    before = _whole(spread, 1.0, always=False) if column else []
    bias: MicroInput = Step(len(before) - 1) if before else spread
    scale = attrs.get("scale", 1.0)
    if scale != 1:
        before.append(MicroSpec("multiply", (Arg(0), Fill(float(scale)))))
    current: MicroInput = Step(len(before) - 1) if scale != 1 else Arg(0)
    if column:
        before.append(MicroSpec("add", (current, bias)))
    elif attrs.get("bias", 0.0) != 0:
        before.append(MicroSpec("add", (current, Fill(float(attrs["bias"])))))
    return _then(before, function)


_REDUCE_MAX = (("dim", "c"), ("type", "max"))
REDUCE_SIGN = {"max": 1.0, "min": -1.0}
"""Row reductions a Buda ``reduce`` computes as ``sign * max(sign * x)``."""


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
    sign = _lookup(REDUCE_SIGN, kind, "tensor_reduce")
    steps: list[MicroSpec] = []
    if cols % TILE:  # sign * x in the row, 0 in the tile padding, then the lowest value there
        steps.append(MicroSpec("multiply", (Arg(0), PaddingMask("c", cols, sign, 0.0))))
        steps.append(MicroSpec("add", (Step(0), PaddingMask("c", cols, 0.0, -math.inf))))
    elif sign != 1:
        steps.append(MicroSpec("multiply", (Arg(0), Fill(sign))))
    steps.append(MicroSpec("reduce", (Step(len(steps) - 1) if steps else Arg(0),), _REDUCE_MAX))
    if sign != 1:
        steps.append(MicroSpec("multiply", (Step(len(steps) - 1), Fill(sign))))
    return tuple(steps)


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
