"""Elementwise ops on on-chip tiles: ``activation`` (Scalar Engine), ``tensor_tensor``
and ``tensor_scalar`` (Vector Engine). Every axis maps straight through, so two
statements may merge along either axis where the shapes allow.

Text forms::

    tensor_3 = nkigym.activation(tensor_2, op="tanh")
    tensor_4 = nkigym.tensor_tensor(tensor_2, tensor_3, op="add")
    tensor_5 = nkigym.tensor_scalar(tensor_4, 0.5, op="multiply")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from nkigym_graph.ir.functions import BINARY, UNARY
from nkigym_graph.ir.ops.base import Op, ShapeError, same_shape
from nkigym_graph.ir.statement import Attrs

_TILE = ("partition", "free")


class _Elementwise(Op):
    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        return same_shape(read_shapes, f"{self.name} input")


class ActivationOp(_Elementwise):
    """``nkigym.activation(data, op=NAME)``: a named unary function."""

    name = "activation"
    operand_names = ("data", "dst")
    read_positions = (0,)
    write_positions = (1,)
    axes = (_TILE, _TILE)
    keyword_attrs = ("op",)
    attr_choices: ClassVar[Mapping[str, Mapping[str, Any]]] = {"op": UNARY}
    engine = "scalar"
    on_chip_positions = (0, 1)

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        return UNARY[attrs["op"]](inputs[0])


class TensorTensorOp(_Elementwise):
    """``nkigym.tensor_tensor(x, y, op=NAME)``: a named binary function of two equal-shape tiles."""

    name = "tensor_tensor"
    operand_names = ("data1", "data2", "dst")
    read_positions = (0, 1)
    write_positions = (2,)
    axes = (_TILE, _TILE, _TILE)
    keyword_attrs = ("op",)
    attr_choices: ClassVar[Mapping[str, Mapping[str, Any]]] = {"op": BINARY}
    engine = "vector"
    on_chip_positions = (0, 1, 2)

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        return BINARY[attrs["op"]](inputs[0], inputs[1])


class TensorScalarOp(_Elementwise):
    """``nkigym.tensor_scalar(data, scalar, op=NAME)``: ``op(data, scalar)`` for a constant."""

    name = "tensor_scalar"
    operand_names = ("data", "dst")
    read_positions = (0,)
    write_positions = (1,)
    axes = (_TILE, _TILE)
    positional_attrs = ("scalar",)
    keyword_attrs = ("op",)
    attr_choices: ClassVar[Mapping[str, Mapping[str, Any]]] = {"op": BINARY}
    engine = "vector"
    on_chip_positions = (0, 1)

    def check_attrs(self, attrs: Attrs) -> str | None:
        problem = super().check_attrs(attrs)
        if problem is None and not isinstance(dict(attrs)["scalar"], int | float):
            return f"scalar must be a number, got {dict(attrs)['scalar']!r}"
        return problem

    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        if len(read_shapes) != 1:
            raise ShapeError("tensor_scalar takes one tensor operand")
        return read_shapes[0]

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        return np.asarray(BINARY[attrs["op"]](inputs[0], attrs["scalar"]))


ACTIVATION = ActivationOp()
TENSOR_TENSOR = TensorTensorOp()
TENSOR_SCALAR = TensorScalarOp()
