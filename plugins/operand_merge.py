"""``operand_merge`` (seed 000): two statements of one op that differ in a single
operand, adjacent along one axis, become one wider statement.

Before::

    tensor_2 = nkigym.nc_matmul(tensor_0[0:128, 0:128], tensor_1[0:128, 0:128])
    output[0:128, 0:128] = tensor_2
    tensor_5 = nkigym.nc_matmul(tensor_0[0:128, 0:128], tensor_1[0:128, 128:256])
    output[0:128, 128:256] = tensor_5

After (N = 256, ``tensor_5`` absorbed into ``tensor_2``)::

    tensor_2 = nkigym.nc_matmul(tensor_0[0:128, 0:128], tensor_1[0:128, 0:256])
    output[0:128, 0:128] = tensor_2[0:128, 0:128]
    output[0:128, 128:256] = tensor_2[0:128, 128:256]

Applies to every op with mergeable axes (loads, stores, matmuls on M or N, elementwise
ops, reductions along the partition axis) within the op's limits on the program's
target; the rules are in ``nkigym_graph.merge``.
"""

from __future__ import annotations

from nkigym_graph import hookimpl
from nkigym_graph.merge import MergeAnalysis
from nkigym_graph.program import Program
from nkigym_graph.transform import Match, Transform


class OperandMerge(Transform):
    """Merge adjacent same-op statements (see the module docstring)."""

    name = "operand_merge"
    ops: tuple[str, ...] | None = None
    """Restrict to these op names (None: every op with mergeable axes)."""
    axes: tuple[str, ...] | None = None
    """Restrict to these axis labels (None: all)."""

    def _work(self, program: Program) -> list[tuple[str, tuple[int, ...]]]:
        out = []
        for op_name, nodes in sorted(program.index.by_op.items()):
            op = program.statements[nodes[0]].op
            for axis in sorted(op.mergeable_axes()):
                if (self.ops is None or op_name in self.ops) and (self.axes is None or axis in self.axes):
                    out.append((axis, nodes))
        return out

    def analyze(self, program: Program) -> list[Match]:
        analysis = MergeAnalysis(program)
        matches = []
        for axis, nodes in self._work(program):
            for lower, upper in analysis.candidates(nodes, axis):
                if analysis.blocker(lower, upper, axis) is None:
                    matches.append(analysis.match(self.name, lower, upper, axis))
        return matches

    def explain(self, program: Program, *nodes: int) -> str:
        if len(nodes) != 2:
            return f"{self.name} merges two statements, got {len(nodes)}"
        a, b = nodes
        sa, sb = program.statements[a], program.statements[b]
        if sa.op is not sb.op:
            return f"different ops: {sa.op.name} and {sb.op.name}"
        analysis = MergeAnalysis(program)
        reasons = []
        for axis, group in self._work(program):
            if a not in group:
                continue
            key_a, key_b = analysis.signature(a, axis), analysis.signature(b, axis)
            if key_a is None or key_b is None or key_a[0] != key_b[0]:
                reasons.append(f"{axis}: the statements differ in more than their {axis} ranges")
                continue
            lower, upper = (a, b) if key_a[1] <= key_b[1] else (b, a)
            if not analysis.adjacent(lower, upper, axis):
                reasons.append(f"{axis}: the {axis} ranges are not adjacent")
                continue
            blocker = analysis.blocker(lower, upper, axis)
            if blocker is None:
                size = analysis.merged_size(lower, upper, axis)
                return f"mergeable along {axis}: {sa.op.name} {axis} becomes {size}"
            reasons.append(f"{axis}: {blocker}")
        return "; ".join(reasons) or f"{sa.op.name} has no mergeable axis"


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [OperandMerge]
