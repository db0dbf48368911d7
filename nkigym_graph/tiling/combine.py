"""How the partial results of a call over the tiles of a reduced dimension combine.

A call that reduces a dimension wider than one tile (``nc_matmul`` over K chunks, a
row ``tensor_reduce`` over free-axis chunks) computes one partial result per tile:
the first defines the result tile, each later one is folded in. Rules as data, keyed
by ``(op name, op= attribute)``. A mean sums its chunks and divides the sum by the
reduced size once, after the last chunk.
"""

from __future__ import annotations

from typing import NamedTuple

from nkigym_graph.errors import TilingError
from nkigym_graph.ir.ops import TENSOR_SCALAR, TENSOR_TENSOR
from nkigym_graph.ir.ops.base import Op
from nkigym_graph.ir.statement import Attrs, make_attrs


class Combine(NamedTuple):
    """Fold a partial result in by ``+=`` (``op`` None) or by ``acc = op(acc, part, **attrs)``."""

    op: Op | None = None
    attrs: Attrs = ()
    partial: Attrs | None = None
    """Attributes of the per-chunk statements (None: the call's own)."""
    divide: bool = False
    """After the last chunk, divide the folded result by the reduced size (a mean)."""

    def finish(self, size: int) -> tuple[Op, Attrs] | None:
        """The statement applied to the folded result, given the reduced size, or None."""
        return (TENSOR_SCALAR, make_attrs(scalar=size, op="divide")) if self.divide else None


ACCUMULATE = Combine()

RULES: dict[tuple[str, str | None], Combine] = {
    ("nc_matmul", None): ACCUMULATE,  # acc[...] += nc_matmul(lhs_k, rhs_k)
    ("tensor_reduce", "sum"): ACCUMULATE,  # acc[...] += tensor_reduce(x_f, op="sum")
    ("tensor_reduce", "max"): Combine(TENSOR_TENSOR, make_attrs(op="maximum")),  # max of maxes
    ("tensor_reduce", "min"): Combine(TENSOR_TENSOR, make_attrs(op="minimum")),  # min of mins
    ("tensor_reduce", "mean"): Combine(partial=make_attrs(op="sum"), divide=True),  # sum, then / n
}


def combine_rule(op: Op, attrs: Attrs) -> Combine:
    """The rule for ``op`` with ``attrs``; TilingError if its partials cannot be combined."""
    kind = dict(attrs).get("op")
    rule = RULES.get((op.name, kind))
    if rule is None:
        what = op.name if kind is None else f'{op.name}(op="{kind}")'
        raise TilingError(
            f"{what} reduces a dimension wider than one tile, but there is no rule to "
            "combine its partial results"
        )
    return rule
