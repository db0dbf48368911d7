"""Op singletons. Each op carries its own operand layout, limits, semantics and printing."""

from nkigym_graph.ir.ops.base import Op, ShapeError
from nkigym_graph.ir.ops.elementwise import ACTIVATION, TENSOR_SCALAR, TENSOR_TENSOR
from nkigym_graph.ir.ops.matmul import NC_MATMUL
from nkigym_graph.ir.ops.memory import ALLOC, LOAD, STORE
from nkigym_graph.ir.ops.reduce import TENSOR_REDUCE
from nkigym_graph.ir.ops.registry import all_ops, get_op, register_op
from nkigym_graph.ir.ops.transpose import NC_TRANSPOSE

for _op in (
    LOAD,
    STORE,
    ALLOC,
    NC_MATMUL,
    NC_TRANSPOSE,
    ACTIVATION,
    TENSOR_TENSOR,
    TENSOR_SCALAR,
    TENSOR_REDUCE,
):
    register_op(_op)

__all__ = [
    "ACTIVATION",
    "ALLOC",
    "LOAD",
    "NC_MATMUL",
    "NC_TRANSPOSE",
    "STORE",
    "TENSOR_REDUCE",
    "TENSOR_SCALAR",
    "TENSOR_TENSOR",
    "Op",
    "ShapeError",
    "all_ops",
    "get_op",
    "register_op",
]
