"""Set patterns: statements of one op whose slices are adjacent along an axis.

``SetPattern("tensor_tensor", axis="free", op="add")`` matches adds that differ only in
where they sit along ``free``: same op, attributes and accumulation flag, the operands
without the axis the same data, those with it the same tensor with each statement's
range ending where the next one's starts (a destination each statement defines afresh
may differ: merging makes it one tile). The rules, the grouping (n log n: statements
are grouped by signature and sorted by coordinate, only neighbours can be adjacent)
and the refusals (the op's size limit on the target, one member reaching another) are
those of the built-in merges (``nkigym_graph.rewriting.patterns.adjacency``).

``pairs`` gives every mergeable adjacent pair (the unit a search steps through),
``runs`` whole runs of adjacent statements cut at the op's limit (what saturation
applies in one batch). Each is a ``Found`` whose ``nodes`` are in axis order and
whose ``axis`` is the pattern's.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> program = tiled_matmul(128, 128, 512)  # four matmuls, each loading a 128 wide block of b
>>> loads = SetPattern("load", axis="free")
>>> [found.nodes for found in loads.runs(program)], [found.nodes for found in loads.pairs(program)]
([(2, 6, 10, 14)], [(2, 6), (6, 10), (10, 14)])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nkigym_graph.errors import TransformError
from nkigym_graph.ir.memo import memo
from nkigym_graph.rewriting.patterns.adjacency import MergeAnalysis
from nkigym_graph.rewriting.patterns.tree import Found, Where

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

_ADJACENCY = ("patterns", "adjacency")
"""The ``Program.memo`` key of a snapshot's ``MergeAnalysis``."""


def adjacency(program: Program) -> MergeAnalysis:
    """``program``'s merge analysis, built once per snapshot."""
    return memo(program, _ADJACENCY, MergeAnalysis)


class SetPattern:
    """Same-op statements adjacent along ``axis`` (see the module docstring)."""

    __slots__ = ("attrs", "axis", "op", "where")

    def __init__(self, op_name: str, /, *, axis: str, where: Where | None = None, **attrs: Any) -> None:
        self.op = op_name
        self.axis = axis
        self.where = where
        self.attrs = attrs

    def members(self, program: Program) -> list[int]:
        """The statements of the op that satisfy the attribute constraints and ``where``."""
        nodes = program.statements_of(self.op)
        if nodes:
            op = program[nodes[0]].op
            if self.axis not in op.mergeable_axes():
                raise TransformError(
                    f"set pattern: {self.op} statements cannot be adjacent along {self.axis!r}; "
                    f"its axes: {', '.join(sorted(op.mergeable_axes())) or 'none'}"
                )
        return [node for node in nodes if self._accepts(program, node)]

    def pairs(self, program: Program) -> list[Found]:
        """Every mergeable adjacent pair, group by group."""
        return [
            self._found(program, pair) for pair in adjacency(program).pairs(self.members(program), self.axis)
        ]

    def runs(self, program: Program) -> list[Found]:
        """Maximal runs of adjacent statements, cut at the op's limit; a run in which one
        statement reaches another falls back to its mergeable pairs."""
        return [
            self._found(program, run) for run in adjacency(program).runs(self.members(program), self.axis)
        ]

    def _accepts(self, program: Program, node: int) -> bool:
        stmt = program[node]
        for name, wanted in self.attrs.items():
            value = stmt.attr(name)
            if not (wanted(value) if callable(wanted) else value == wanted):
                return False
        return self.where is None or self.where(program, node)

    def _found(self, program: Program, nodes: Sequence[int]) -> Found:
        return Found(min(nodes, key=program.order_key), nodes, {}, axis=self.axis)

    def __repr__(self) -> str:
        attrs = "".join(f", {k}={v!r}" for k, v in self.attrs.items())
        return f"SetPattern({self.op!r}, axis={self.axis!r}{attrs})"
