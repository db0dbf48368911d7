"""Elementwise ops on on-chip tiles: ``activation`` (Scalar Engine), ``tensor_tensor``
and ``tensor_scalar`` (Vector Engine), each with a broadcasting form.

Every tile axis maps straight through, so two statements may merge along either axis
where the shapes allow. A broadcast operand's size-1 dimension (label ``BROADCAST``)
is spread over the data's axis: a ``[P, 1]`` *column* holds one value per partition
(a row statistic), a ``[1, F]`` *row* one value per column (a layer-norm weight).

=====================  =========================================  ======================
op (registry name)     text form                                  computes
=====================  =========================================  ======================
``activation``         ``activation(x, op="exp", scale=s, bias=b)``  ``f(x * s + b)``, s, b numbers
``activation_bias``    ``activation(x, column, op="exp", scale=s)``  ``f(x * s + column)``
``tensor_tensor``      ``tensor_tensor(x, y, op="add")``          equal shapes
``tensor_row``         ``tensor_tensor(x, row, op="multiply")``   ``row`` spread over partitions
``tensor_scalar``      ``tensor_scalar(x, 0.5, op="multiply")``   a number
``tensor_column``      ``tensor_scalar(x, column, op="subtract")``  ``column`` spread along the free axis
=====================  =========================================  ======================

The broadcasting forms print with their family's name (NKI's ``tensor_scalar`` takes a
``[P, 1]`` operand, its ``activation`` a ``[P, 1]`` bias); ``scale`` and ``bias`` print
only when they differ from 1 and 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from nkigym_graph.ir.functions import BINARY, UNARY
from nkigym_graph.ir.ops.base import BROADCAST, Op, ShapeError, same_shape
from nkigym_graph.ir.statement import Attrs

TILE = ("partition", "free")
COLUMN = ("partition", BROADCAST)
ROW = (BROADCAST, "free")


class _Elementwise(Op):
    on_chip_positions: tuple[int, ...] = (0, 1)

    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        return same_shape(read_shapes, f"{self.text} input")


def _spread(data: tuple[int, ...], other: tuple[int, ...], labels: tuple[str, ...], what: str) -> None:
    """ShapeError unless ``other`` is ``data`` with the ``BROADCAST`` dimension of ``labels`` at 1."""
    if len(data) != 2 or len(other) != 2:
        raise ShapeError(f"{what} takes 2-D operands, got {data} and {other}")
    expected = tuple(1 if label == BROADCAST else size for label, size in zip(labels, data, strict=True))
    if other != expected:
        kind = "column" if labels == COLUMN else "row"
        raise ShapeError(f"a {kind} operand of a {data} tile must be {expected}, got {other}")


def _constant(compute: Callable[[], np.ndarray]) -> float | None:
    """The one value of a 1 x 1 result, unless it is nan (nothing to skip on)."""
    with np.errstate(all="ignore"):
        value = float(np.asarray(compute(), dtype=np.float64).reshape(-1)[0])
    return None if np.isnan(value) else value


def _affine(x: np.ndarray, scale: Any, bias: Any) -> np.ndarray:
    """``x * scale + bias``, skipping the identities (so ``copy`` stays exact)."""
    if not (type(scale) in (int, float) and scale == 1):
        x = x * scale
    if not (type(bias) in (int, float) and bias == 0):
        x = x + bias
    return x


class ActivationOp(_Elementwise):
    """``nkigym.activation(data, op=NAME, scale=1.0, bias=0.0)``: ``NAME(data * scale + bias)``."""

    name = "activation"
    operand_names = ("data", "dst")
    read_positions = (0,)
    write_positions = (1,)
    axes = (TILE, TILE)
    keyword_attrs = ("op", "scale", "bias")
    attr_choices: ClassVar[Mapping[str, Mapping[str, Any]]] = {"op": UNARY}
    attr_defaults: ClassVar[Mapping[str, Any]] = {"scale": 1.0, "bias": 0.0}
    number_attrs = frozenset({"scale", "bias"})
    finite_attrs = frozenset({"scale"})
    engine = "scalar"

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        values = self.attr_values(tuple(attrs.items()))
        return UNARY[values["op"]](_affine(inputs[0], values["scale"], values["bias"]))

    def constant_result(self, attrs: Attrs, position: int, value: float) -> float | None:
        return _constant(lambda: self.compute([np.array([[value]])], dict(attrs)))


class ActivationBiasOp(Op):
    """``nkigym.activation(data, bias, op=NAME, scale=1.0)``: ``NAME(data * scale + bias)``
    with a ``[P, 1]`` bias column (NKI's ``activation`` bias vector)."""

    name = "activation_bias"
    text_name = "activation"
    operand_names = ("data", "bias", "dst")
    read_positions = (0, 1)
    write_positions = (2,)
    axes = (TILE, COLUMN, TILE)
    keyword_attrs = ("op", "scale")
    attr_choices: ClassVar[Mapping[str, Mapping[str, Any]]] = {"op": UNARY}
    attr_defaults: ClassVar[Mapping[str, Any]] = {"scale": 1.0}
    number_attrs = frozenset({"scale"})
    finite_attrs = frozenset({"scale"})
    engine = "scalar"
    on_chip_positions = (0, 1, 2)

    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        data, bias = read_shapes
        _spread(data, bias, COLUMN, "activation with a bias column")
        return data

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        values = self.attr_values(tuple(attrs.items()))
        return UNARY[values["op"]](_affine(inputs[0], values["scale"], inputs[1]))

    def constant_result(self, attrs: Attrs, position: int, value: float) -> float | None:
        """Constant when the data is infinite (``exp(-inf * scale + bias)`` is 0 for any
        finite bias and a positive scale)."""
        scaled = value * float(self.attr_values(attrs)["scale"])
        if position != 0 or not np.isinf(scaled):
            return None
        return _constant(lambda: self.compute([np.array([[value]]), np.zeros((1, 1))], dict(attrs)))


class TensorTensorOp(_Elementwise):
    """``nkigym.tensor_tensor(x, y, op=NAME)``: a named binary function of two equal-shape tiles."""

    name = "tensor_tensor"
    operand_names = ("data1", "data2", "dst")
    read_positions = (0, 1)
    write_positions = (2,)
    axes = (TILE, TILE, TILE)
    keyword_attrs = ("op",)
    attr_choices: ClassVar[Mapping[str, Mapping[str, Any]]] = {"op": BINARY}
    engine = "vector"
    on_chip_positions = (0, 1, 2)

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        return BINARY[attrs["op"]](inputs[0], inputs[1])


class _Broadcasting(Op):
    """``op(data, other)`` with ``other`` spread over ``data`` (``axes[1]`` says how)."""

    operand_names = ("data", "other", "dst")
    read_positions = (0, 1)
    write_positions = (2,)
    keyword_attrs = ("op",)
    attr_choices: ClassVar[Mapping[str, Mapping[str, Any]]] = {"op": BINARY}
    engine = "vector"
    on_chip_positions = (0, 1, 2)

    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        data, other = read_shapes
        _spread(data, other, self.axes[1], self.text)
        return data

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        return np.asarray(BINARY[attrs["op"]](inputs[0], inputs[1]))


class TensorRowOp(_Broadcasting):
    """``nkigym.tensor_tensor(data, row, op=NAME)`` with a ``[1, F]`` row spread over the partitions."""

    name = "tensor_row"
    text_name = "tensor_tensor"
    operand_names = ("data", "row", "dst")
    axes = (TILE, ROW, TILE)


class TensorColumnOp(_Broadcasting):
    """``nkigym.tensor_scalar(data, column, op=NAME)`` with a ``[P, 1]`` column spread along
    the free axis (NKI's ``tensor_scalar`` with a per-partition operand)."""

    name = "tensor_column"
    text_name = "tensor_scalar"
    operand_names = ("data", "column", "dst")
    axes = (TILE, COLUMN, TILE)
    row_scaling_ops: ClassVar[frozenset[str]] = frozenset({"multiply", "divide"})
    """The ``op`` values that scale each row of ``data`` by a factor of its own (the
    column's value or its reciprocal): such a statement is linear in ``data``, so it
    commutes with a matmul that contracts the free axis (``rowscale(x) @ w = rowscale(x @ w)``)."""

    def scales_rows(self, attrs: Attrs) -> bool:
        """Whether a statement with ``attrs`` scales each row of its data (see ``row_scaling_ops``)."""
        return dict(attrs).get("op") in self.row_scaling_ops


class TensorScalarOp(_Elementwise):
    """``nkigym.tensor_scalar(data, scalar, op=NAME)``: ``op(data, scalar)`` for a constant."""

    name = "tensor_scalar"
    operand_names = ("data", "dst")
    read_positions = (0,)
    write_positions = (1,)
    axes = (TILE, TILE)
    positional_attrs = ("scalar",)
    keyword_attrs = ("op",)
    attr_choices: ClassVar[Mapping[str, Mapping[str, Any]]] = {"op": BINARY}
    number_attrs = frozenset({"scalar"})
    engine = "vector"

    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        if len(read_shapes) != 1:
            raise ShapeError("tensor_scalar takes one tensor operand")
        return read_shapes[0]

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        return np.asarray(BINARY[attrs["op"]](inputs[0], attrs["scalar"]))

    def constant_result(self, attrs: Attrs, position: int, value: float) -> float | None:
        return _constant(lambda: self.compute([np.array([[value]])], dict(attrs)))


ACTIVATION = ActivationOp()
ACTIVATION_BIAS = ActivationBiasOp()
TENSOR_TENSOR = TensorTensorOp()
TENSOR_ROW = TensorRowOp()
TENSOR_SCALAR = TensorScalarOp()
TENSOR_COLUMN = TensorColumnOp()
