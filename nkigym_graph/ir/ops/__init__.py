"""Op singletons. Each op carries its own operand layout, limits, semantics and printing."""

from nkigym_graph.ir.ops.base import BROADCAST, Op, ShapeError
from nkigym_graph.ir.ops.elementwise import (
    ACTIVATION,
    ACTIVATION_BIAS,
    TENSOR_COLUMN,
    TENSOR_ROW,
    TENSOR_SCALAR,
    TENSOR_TENSOR,
)
from nkigym_graph.ir.ops.matmul import NC_MATMUL
from nkigym_graph.ir.ops.memory import ALLOC, LOAD, STORE
from nkigym_graph.ir.ops.reduce import TENSOR_REDUCE
from nkigym_graph.ir.ops.registry import all_ops, get_op, ops_printed_as, register_op
from nkigym_graph.ir.ops.select import AFFINE_SELECT
from nkigym_graph.ir.ops.transpose import NC_TRANSPOSE

for _op in (
    LOAD,
    STORE,
    ALLOC,
    NC_MATMUL,
    NC_TRANSPOSE,
    ACTIVATION,
    ACTIVATION_BIAS,
    TENSOR_TENSOR,
    TENSOR_ROW,
    TENSOR_SCALAR,
    TENSOR_COLUMN,
    TENSOR_REDUCE,
    AFFINE_SELECT,
):
    register_op(_op)

__all__ = [
    "ACTIVATION",
    "ACTIVATION_BIAS",
    "AFFINE_SELECT",
    "ALLOC",
    "BROADCAST",
    "LOAD",
    "NC_MATMUL",
    "NC_TRANSPOSE",
    "STORE",
    "TENSOR_COLUMN",
    "TENSOR_REDUCE",
    "TENSOR_ROW",
    "TENSOR_SCALAR",
    "TENSOR_TENSOR",
    "Op",
    "ShapeError",
    "all_ops",
    "get_op",
    "ops_printed_as",
    "register_op",
]
