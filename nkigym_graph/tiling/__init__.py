"""Tiling: a user's tensor function and parameter shapes -> a verified tiled ``Program``.

Write the function with the op functions (``nc_matmul``, ``activation``, ...), run it
on numpy arrays for the reference result, and ``tile`` it::

    def f(a, b):
        return activation(nc_matmul(a, b), op="tanh")

    program = tile(f, {"a": (256, 128), "b": (256, 512)})
"""

from nkigym_graph.tiling.axes import AxisUnion
from nkigym_graph.tiling.dimensions import Dimension, DimensionAnalysis, analyze
from nkigym_graph.tiling.errors import OpCallError, StatementLimitError, TracingError
from nkigym_graph.tiling.frontend import (
    activation,
    affine_select,
    nc_matmul,
    nc_transpose,
    tensor_reduce,
    tensor_scalar,
    tensor_tensor,
)
from nkigym_graph.tiling.tile import TiledParts, tile, tile_parts
from nkigym_graph.tiling.trace import Trace, TracedTensor

__all__ = [
    "AxisUnion",
    "Dimension",
    "DimensionAnalysis",
    "OpCallError",
    "StatementLimitError",
    "TiledParts",
    "Trace",
    "TracedTensor",
    "TracingError",
    "activation",
    "affine_select",
    "analyze",
    "nc_matmul",
    "nc_transpose",
    "tensor_reduce",
    "tensor_scalar",
    "tensor_tensor",
    "tile",
    "tile_parts",
]
