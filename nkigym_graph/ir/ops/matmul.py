"""``nc_matmul``: the Tensor Engine's matrix multiply, ``dst[M,N] = lhs[K,M].T @ rhs[K,N]``.

``lhs`` is the stationary operand, ``rhs`` the moving one. Accumulation over K chunks
is the statement's ``accumulate`` flag (``dst[...] += nkigym.nc_matmul(...)``).
Limits per target: ``M``, ``K`` and ``N`` (Trn2: 128, 128, 512).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nkigym_graph.ir.ops.base import Op, ShapeError
from nkigym_graph.ir.statement import Attrs


class NcMatmulOp(Op):
    """``nkigym.nc_matmul(lhs, rhs)``: contraction over the partition dim K of both inputs."""

    name = "nc_matmul"
    operand_names = ("lhs", "rhs", "dst")
    read_positions = (0, 1)
    write_positions = (2,)
    axes = (("K", "M"), ("K", "N"), ("M", "N"))
    engine = "tensor"
    on_chip_positions = (0, 1, 2)

    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        lhs, rhs = read_shapes
        if len(lhs) != 2 or len(rhs) != 2:
            raise ShapeError(f"nc_matmul takes 2-D operands, got {lhs} and {rhs}")
        if lhs[0] != rhs[0]:
            raise ShapeError(f"contraction sizes differ: lhs K={lhs[0]}, rhs K={rhs[0]}")
        return (lhs[1], rhs[1])

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        lhs, rhs = inputs
        return np.asarray(lhs.T @ rhs)

    def constant_result(self, attrs: Attrs, position: int, value: float) -> float | None:
        """A zero operand (and finite other) gives zero."""
        return 0.0 if value == 0 else None


NC_MATMUL = NcMatmulOp()
