"""``nc_transpose``: the Tensor Engine's 2-D transpose, ``dst[F,P] = data[P,F].T``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nkigym_graph.ir.ops.base import Op, ShapeError
from nkigym_graph.ir.statement import Attrs


class NcTransposeOp(Op):
    """``nkigym.nc_transpose(data)``; both sides within the target's ``partition``/``free`` limits."""

    name = "nc_transpose"
    operand_names = ("data", "dst")
    read_positions = (0,)
    write_positions = (1,)
    axes = (("partition", "free"), ("free", "partition"))
    engine = "tensor"
    on_chip_positions = (0, 1)
    result_keeps_input_dtype = True

    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        (shape,) = read_shapes
        if len(shape) != 2:
            raise ShapeError(f"nc_transpose takes a 2-D operand, got {shape}")
        return (shape[1], shape[0])

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        return np.ascontiguousarray(inputs[0].T)

    def constant_result(self, attrs: Attrs, position: int, value: float) -> float | None:
        return value


NC_TRANSPOSE = NcTransposeOp()
