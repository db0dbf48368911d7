"""``MergeTransform``: the transform class behind ``operand_merge`` and
``free_dim_merge``; subclasses set ``name`` and may restrict ``ops`` and ``axes``.

``analyze`` returns pair merges (seed 000's unit), ``analyze_batch`` whole runs of
adjacent statements cut at the limit (used by saturation), ``explain`` says why two
statements do or do not merge, naming the limit (``nc_matmul N would be 640 > 512``).
"""

from __future__ import annotations

from nkigym_graph.merge import MergeAnalysis
from nkigym_graph.program import Program
from nkigym_graph.transform import Match, Transform


class MergeTransform(Transform):
    """Merge adjacent same-op statements (rules in ``nkigym_graph.merge``)."""

    ops: tuple[str, ...] | None = None
    """Restrict to these op names (None: every op with mergeable axes)."""
    axes: tuple[str, ...] | None = None
    """Restrict to these axis labels (None: all)."""

    def _work(self, program: Program) -> list[tuple[str, tuple[int, ...]]]:
        out: list[tuple[str, tuple[int, ...]]] = []
        for op_name, nodes in sorted(program.index.by_op.items()):
            if self.ops is not None and op_name not in self.ops:
                continue
            op = program.statements[nodes[0]].op
            out.extend(
                (axis, nodes)
                for axis in sorted(op.mergeable_axes())
                if self.axes is None or axis in self.axes
            )
        return out

    def analyze(self, program: Program) -> list[Match]:
        analysis = MergeAnalysis(program)
        return [
            m for axis, nodes in self._work(program) for m in analysis.pair_matches(self.name, nodes, axis)
        ]

    def analyze_batch(self, program: Program) -> list[Match]:
        analysis = MergeAnalysis(program)
        return [
            m for axis, nodes in self._work(program) for m in analysis.run_matches(self.name, nodes, axis)
        ]

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
            blocker = analysis.blocker((lower, upper), axis)
            if blocker is None:
                size = analysis.size(lower, axis) + analysis.size(upper, axis)
                return f"mergeable along {axis}: {sa.op.name} {axis} becomes {size}"
            reasons.append(f"{axis}: {blocker}")
        return "; ".join(reasons) or f"{sa.op.name} has no mergeable axis"
