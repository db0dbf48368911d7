"""What a graph op reads: the shape, in tiles, it expects of each input after the input's
TMs, from its own output shape and attributes (the checker's ``shapes.inputs`` rule).

A graph op's output is ``(t, rows, cols)`` tiles (``t x grid x mblock x ublock``). Elementwise
ops read inputs of their output's shape; a matmul reads input 0 with its output's rows,
input 1 with its output's columns, and a ``bias: true`` input 2 of its output's shape, each
with its output's ``t`` (any ``t`` with ``accumulate: true``, which sums over ``t``); its
inner dim is the ``shapes.matmul_inner`` rule. A reduce keeps the dims it does not reduce (``dim: z``
reads ``z`` times its output's ``t``). Other types (fused ops, sparse matmuls, splice,
quantization, ...) are not modelled: :func:`input_reads` gives nothing for them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from nkigym_graph.buda.model import NetlistOp
from nkigym_graph.buda.optypes import FPU_BINARY, SFPU, SPARSE_MATMUL_ATTRIBUTES, UNARY
from nkigym_graph.buda.tms import Shape


@dataclass(frozen=True)
class Reads:
    """The shape an op expects of one input: ``(t, rows, cols)`` with None where any size
    goes; ``why`` says what fixes the sizes."""

    shape: tuple[int | None, int | None, int | None]
    why: str

    def accepts(self, shape: Shape) -> bool:
        return all(want is None or want == got for want, got in zip(self.shape, shape, strict=True))

    def __str__(self) -> str:
        t, rows, cols = ("?" if size is None else str(size) for size in self.shape)
        return f"{rows}x{cols} tiles, t {t} ({self.why})"


def _elementwise(op: NetlistOp) -> list[Reads]:
    return [Reads(op.tiles, "the op's output")] * len(op.inputs)


def _matmul(op: NetlistOp) -> list[Reads]:
    if any(op.attributes.get(name) for name in SPARSE_MATMUL_ATTRIBUTES):
        return []
    t, rows, cols = op.tiles
    t_in = None if op.attributes.get("accumulate") else t
    reads = [
        Reads((t_in, rows, None), "the op's output rows"),
        Reads((t_in, None, cols), "the op's output columns"),
    ]
    if op.attributes.get("bias"):
        reads.append(Reads((t_in, rows, cols), "the op's output, for the bias"))
    return reads


def _reduce(op: NetlistOp) -> list[Reads]:
    t, rows, cols = op.tiles
    dim, z = op.attributes.get("dim"), op.attributes.get("z", 1)
    if dim == "r":
        return [Reads((t, None, cols), "the op's output columns")]
    if dim == "c":
        return [Reads((t, rows, None), "the op's output rows")]
    if dim == "z" and isinstance(z, int) and not isinstance(z, bool):
        return [Reads((t * z, rows, cols), f"the op's output, {z} times along t")]
    return []


INPUT_READS: Mapping[str, Callable[[NetlistOp], list[Reads]]] = {
    **dict.fromkeys(UNARY | SFPU | FPU_BINARY | {"maximum"}, _elementwise),
    "matmul": _matmul,
    "reduce": _reduce,
}
"""Per graph op type: what it reads of each input."""


def input_reads(op: NetlistOp) -> list[Reads]:
    """What ``op`` reads of its first inputs (fewer than its inputs, or none, when the rest
    are not modelled)."""
    reads = INPUT_READS.get(op.type)
    return reads(op) if reads is not None else []
