"""Op type names of Buda netlists, grouped the way the backend treats them."""

from __future__ import annotations

UNARY = frozenset({"datacopy", "nop"})
SFPU = frozenset(
    {
        "exp", "log", "sqrt", "gelu", "gelu_derivative", "reciprocal", "sigmoid", "dropout",
        "tanh", "square", "power", "sine", "cosine", "lrelu", "abs",
    }
)  # fmt: skip
FPU_BINARY = frozenset({"add", "subtract", "multiply"})
QUANT = frozenset({"quantization", "dequantization", "requantization"})
REQUANT_DEQUANT = frozenset({"dequantization", "requantization"})
BINARY = FPU_BINARY | QUANT | {"maximum"}
SUB_OP_TYPES = UNARY | SFPU | BINARY | {"matmul", "reduce"}
"""Every type a fused op's sub-op may have."""
UNFUSABLE = frozenset({"splice", "embedding", "depthwise", "sparse_matmul"})
GRAPH_OP_TYPES = SUB_OP_TYPES | UNFUSABLE | {"fused_op", "tilizer", "buffer", "ethernet_datacopy"}
"""Every graph op type this package knows."""
INT_FUSED_TYPES = UNARY | FPU_BINARY | QUANT | {"maximum"}
"""Sub-op types allowed in an integer fused op."""
MATH_FIDELITIES = ("LoFi", "HiFi2", "HiFi3", "HiFi4", "HiFi2_A", "HiFi2_B")
"""The ``math_fidelity`` values the backend's parser reads (``netlist_utils::get_fidelity``),
spelled exactly so."""
SPARSE_MATMUL_ATTRIBUTES = (
    "identity",
    "num_sparse_tiles",
    "num_index_tiles",
    "sparse_tile_ptr_bits",
)


def arity(op_type: str) -> int | None:
    """Number of inputs a sub-op of this type takes (None when unknown)."""
    if op_type in UNARY or op_type in SFPU or op_type == "reduce":
        return 1
    if op_type in BINARY or op_type == "matmul":
        return 2
    return None


EXTRA_GRAPH_INPUTS = {"matmul": 2}
"""Inputs a graph op may take beyond its sub-op arity: a matmul's bias (``bias: true``), a
sparse matmul's index tiles and a quantizing matmul's scalars."""


def graph_input_counts(op_type: str) -> range | None:
    """How many inputs a graph op of this type may have (None when unknown)."""
    count = arity(op_type)
    return None if count is None else range(count, count + 1 + EXTRA_GRAPH_INPUTS.get(op_type, 0))


def is_matmul_or_reduce(op_type: str) -> bool:
    return op_type in ("matmul", "reduce")
