"""``tensor_reduce``: reduce the free axis of a tile, ``dst[P,1] = op(data[P,F], axis=1)``.

The destination has no free axis to speak of, so two reductions merge only along the
partition axis; partial reductions over free-axis chunks combine by accumulation
(``+=`` for sums) or a following ``tensor_tensor`` (for max/min).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from nkigym_graph.ir.functions import REDUCE
from nkigym_graph.ir.ops.base import Op, ShapeError
from nkigym_graph.ir.statement import Attrs


class TensorReduceOp(Op):
    """``nkigym.tensor_reduce(data, op="sum"|"max"|"min")`` over the free axis, keeping dims."""

    name = "tensor_reduce"
    operand_names = ("data", "dst")
    read_positions = (0,)
    write_positions = (1,)
    axes = (("partition", "free"), ("partition", "reduced"))
    keyword_attrs = ("op",)
    attr_choices: ClassVar[Mapping[str, Mapping[str, Any]]] = {"op": REDUCE}
    engine = "vector"
    on_chip_positions = (0, 1)

    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        (shape,) = read_shapes
        if len(shape) != 2:
            raise ShapeError(f"tensor_reduce takes a 2-D operand, got {shape}")
        return (shape[0], 1)

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        return np.asarray(REDUCE[attrs["op"]](inputs[0], axis=1, keepdims=True))

    def constant_result(self, attrs: Attrs, position: int, value: float) -> float | None:
        """A row of equal values has that maximum, minimum and mean; a sum only of zeros
        is known without the row's length."""
        kind = dict(attrs)["op"]
        return value if kind != "sum" or value == 0 else None

    def mergeable_axes(self) -> frozenset[str]:
        return frozenset({"partition"})


TENSOR_REDUCE = TensorReduceOp()
