"""``MergeTransform``: the pattern transform behind ``operand_merge`` and
``free_dim_merge``: a set pattern (``SetPattern``, every op and axis unless a subclass
narrows it) and ``merge_run``. The base finds pairs for ``analyze`` (seed 000's unit)
and whole runs cut at the limit for ``analyze_batch`` (used by saturation), and updates
them along derivations; ``explain`` says why two statements do or do not merge, naming
the limit (``nc_matmul N would be 640 > 512``).
"""

from __future__ import annotations

from typing import ClassVar

from nkigym_graph.ir.program import Program
from nkigym_graph.rewriting.patterns import Found, PatternTransform, SetPattern, merge_run
from nkigym_graph.rewriting.patterns.adjacency import MergeAnalysis
from nkigym_graph.rewriting.patterns.sets import adjacency
from nkigym_graph.rewriting.transform import Edit


class MergeTransform(PatternTransform):
    """Merge adjacent same-op statements (rules in ``nkigym_graph.rewriting.patterns.adjacency``)."""

    pattern: ClassVar[SetPattern] = SetPattern()
    edits_every_match = True

    def edit(self, program: Program, found: Found) -> Edit | None:
        return merge_run(program, found.nodes, str(found.axis))

    def describe(self, program: Program, found: Found) -> str:
        axis, keeper = str(found.axis), min(found.nodes, key=program.order_key)
        total = sum(adjacency(program).size(node, axis) for node in found.nodes)
        into = ", ".join(str(node) for node in program.in_order(found.nodes) if node != keeper)
        return f"{program[keeper].op.name} {axis} {total}: statement {into} into {keeper}"

    def _work(self, program: Program) -> list[tuple[str, tuple[int, ...]]]:
        return [(axis, tuple(nodes)) for _, axis, nodes in self.pattern.covered(program)]

    def explain(self, program: Program, *nodes: int) -> str:
        if len(nodes) != 2:
            return f"{self.name} merges two statements, got {len(nodes)}"
        a, b = nodes
        sa, sb = program[a], program[b]
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
                reasons.append(f"{axis}: {analysis.apart(lower, upper, axis)}")
                continue
            blocker = analysis.blocker((lower, upper), axis)
            if blocker is None:
                size = analysis.size(lower, axis) + analysis.size(upper, axis)
                return f"mergeable along {axis}: {sa.op.name} {axis} becomes {size}"
            reasons.append(f"{axis}: {blocker}")
        return "; ".join(reasons) or f"{sa.op.name} has no mergeable axis"
