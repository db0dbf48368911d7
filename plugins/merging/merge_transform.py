"""``MergeTransform``: the transform class behind ``operand_merge`` and
``free_dim_merge``; subclasses set ``name`` and may restrict ``ops`` and ``axes``.

``analyze`` returns pair merges (seed 000's unit), ``analyze_batch`` whole runs of
adjacent statements cut at the limit (used by saturation), ``explain`` says why two
statements do or do not merge, naming the limit (``nc_matmul N would be 640 > 512``).
"""

from __future__ import annotations

from typing import NamedTuple

from nkigym_graph.ir.program import Program
from nkigym_graph.rewriting.analysis_cache import Analysis, LazyMatches, analysis_of
from nkigym_graph.rewriting.patterns.adjacency import MergeAnalysis
from nkigym_graph.rewriting.transform import Match, Transform

from .sections import Section


class _State(NamedTuple):
    """What a merge analysis keeps to update itself (``Transform.reanalysis``)."""

    analysis: MergeAnalysis
    sections: dict[tuple[str, str], Section]


class MergeTransform(Transform):
    """Merge adjacent same-op statements (rules in ``nkigym_graph.rewriting.patterns.adjacency``)."""

    ops: tuple[str, ...] | None = None
    """Restrict to these op names (None: every op with mergeable axes)."""
    axes: tuple[str, ...] | None = None
    """Restrict to these axis labels (None: all)."""

    def _work(self, program: Program) -> list[tuple[str, tuple[int, ...]]]:
        out: list[tuple[str, tuple[int, ...]]] = []
        for op_name, nodes in sorted(program.index.by_op.items()):
            if self.ops is not None and op_name not in self.ops:
                continue
            op = program[nodes[0]].op
            out.extend(
                (axis, nodes)
                for axis in sorted(op.mergeable_axes())
                if self.axes is None or axis in self.axes
            )
        return out

    def analyze(self, program: Program) -> list[Match]:
        return list(self.analysis(program).matches)

    def analysis(self, program: Program) -> Analysis:
        analysis = MergeAnalysis(program)
        sections = {
            (program[nodes[0]].op.name, axis): Section.build(analysis, nodes, axis)
            for axis, nodes in self._work(program)
        }
        return self._finish(analysis, sections)

    def reanalysis(self, program: Program, previous: Analysis) -> Analysis | None:
        derivation = program.derivation
        if derivation is None or not isinstance(previous.state, _State):
            return None
        before = previous.state
        analysis = MergeAnalysis(program)
        dirty_of: dict[str, list[int]] = {}
        for node in program.in_order(derivation.altered):
            dirty_of.setdefault(program[node].op.name, []).append(node)
        sections = {}
        for axis, nodes in self._work(program):
            key = (program[nodes[0]].op.name, axis)
            old = before.sections.get(key)
            sections[key] = (
                Section.build(analysis, nodes, axis)
                if old is None
                else old.derived(before.analysis, analysis, derivation, dirty_of.get(key[0], []))
            )
        return self._finish(analysis, sections)

    def _finish(self, analysis: MergeAnalysis, sections: dict[tuple[str, str], Section]) -> Analysis:
        specs = [spec for section in sections.values() for spec in section.pair_specs()]
        return Analysis(
            LazyMatches(specs, lambda spec: analysis.match(self.name, (spec[1], spec[2]), spec[0])),
            _State(analysis, sections),
        )

    def analyze_batch(self, program: Program) -> list[Match]:
        """Whole chains of adjacent statements cut at the limit, one match each (from the
        cached analysis; the same as ``MergeAnalysis.run_matches`` over every section)."""
        state = analysis_of(program, self).state
        out = []
        for (_, axis), section in state.sections.items():
            for group in sorted(section.groups.values(), key=lambda g: g.first):
                if len(group.members) > 1:
                    out.extend(state.analysis.chain_matches(self.name, group.members, axis))
        return out

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
                reasons.append(f"{axis}: the {axis} ranges are not adjacent")
                continue
            blocker = analysis.blocker((lower, upper), axis)
            if blocker is None:
                size = analysis.size(lower, axis) + analysis.size(upper, axis)
                return f"mergeable along {axis}: {sa.op.name} {axis} becomes {size}"
            reasons.append(f"{axis}: {blocker}")
        return "; ".join(reasons) or f"{sa.op.name} has no mergeable axis"
