"""Merging two statements of the same op into one wider statement: the machinery
behind ``operand_merge`` and ``free_dim_merge`` (seeds 000 and 001).

Two statements merge along an axis label ``X`` (``nc_matmul``: ``M`` or ``N``; loads,
stores and elementwise ops: ``partition`` or ``free``) when

1. they have the same op, attributes and accumulation flag;
2. every operand without ``X`` is the same data (two load variables holding the same
   region of a parameter count as the same data);
3. every operand with ``X`` is the same tensor, the lower statement's range ending
   where the upper one's starts, all other ranges equal; a destination that each
   statement defines afresh becomes one tensor (the keeper's) of the summed size;
4. the merged size is within the op's limit on the target (``op.can_merge_dim``);
5. neither statement reaches the other in the DAG (merging would create a cycle, or
   change what a reader in between sees).

Candidates are found by grouping statements under a signature (op, attributes, every
operand apart from its ``X`` range) and sorting each group by ``X`` start: only
neighbours in that order can be adjacent, so analysis is n log n, never all pairs.
The earlier statement absorbs the later; every other statement that mentions the
absorbed tile reads the merged one at an offset (seed 000's
``output[0:128, 128:256] = tensor_2[0:128, 128:256]``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from nkigym_graph.program import Program
from nkigym_graph.slices import Slices, span, with_range
from nkigym_graph.statement import Operand
from nkigym_graph.transform import Edit, Match, Rename, Transform
from nkigym_graph.variables import INTERMEDIATE


@dataclass(frozen=True)
class Side:
    """One operand position's role in a merge along an axis."""

    position: int
    dim: int | None
    """Dimension carrying the axis, or None."""
    fresh: bool
    """A destination tile this statement defines."""


def _drop(slices: Slices, dim: int) -> Slices:
    return slices[:dim] + slices[dim + 1 :]


class MergeAnalysis:
    """Merge candidates of one program (built once per ``analyze``)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self._identities: dict[Operand, tuple] = {}
        self._sides: dict[tuple[int, str], list[Side]] = {}
        self.loaded: dict[str, tuple[str, Slices]] = {}
        for node in program.statements_of("load"):
            src, dst = program.statements[node].operands
            if len(program.writers_of(dst.var)) == 1:
                self.loaded[dst.var] = (src.var, src.slices)

    # -- identity -----------------------------------------------------------------------
    def identity(self, operand: Operand) -> tuple:
        """What data an operand denotes: a parameter region for a loaded tile."""
        found = self._identities.get(operand)
        if found is not None:
            return found
        source = self.loaded.get(operand.var)
        if source is None:
            found = (operand.var, operand.slices)
        else:
            param, base = source
            found = (
                param,
                tuple((b + s, b + e) for (s, e), (b, _) in zip(operand.slices, base, strict=True)),
            )
        self._identities[operand] = found
        return found

    def sides(self, node: int, axis: str) -> list[Side]:
        """Each operand's role in a merge of ``node`` along ``axis`` (cached)."""
        key = (node, axis)
        found = self._sides.get(key)
        if found is None:
            found = self._sides[key] = self._compute_sides(node, axis)
        return found

    def _compute_sides(self, node: int, axis: str) -> list[Side]:
        stmt = self.program.statements[node]
        op = stmt.op
        out = []
        for position, labels in enumerate(op.axes):
            dim = labels.index(axis) if axis in labels else None
            fresh = False
            if position in op.write_positions and not stmt.accumulate:
                info = self.program.variables[stmt.operands[position].var]
                fresh = info.kind == INTERMEDIATE and info.defined_by == node
            out.append(Side(position, dim, fresh))
        return out

    def signature(self, node: int, axis: str) -> tuple | None:
        """Group key and sort coordinate of ``node`` for merges along ``axis``."""
        stmt = self.program.statements[node]
        parts: list[object] = [stmt.op, stmt.attrs, stmt.accumulate]
        coordinate = None
        for side in self.sides(node, axis):
            operand = stmt.operands[side.position]
            if side.fresh:
                parts.append(("fresh", len(operand.slices)))
            elif side.dim is None:
                parts.append(self.identity(operand))
            else:
                parts.append((operand.var, _drop(operand.slices, side.dim)))
                if coordinate is None:
                    coordinate = operand.slices[side.dim][0]
        if coordinate is None:
            return None
        return (tuple(parts), coordinate)

    # -- pairs --------------------------------------------------------------------------
    def candidates(self, nodes: Iterable[int], axis: str) -> list[tuple[int, int]]:
        """``(lower, upper)`` neighbour pairs that satisfy rules 1-3."""
        groups: dict[tuple, list[tuple[int, int]]] = {}
        for node in nodes:
            sig = self.signature(node, axis)
            if sig is not None:
                groups.setdefault(sig[0], []).append((sig[1], node))
        pairs = []
        for members in groups.values():
            if len(members) < 2:
                continue
            members.sort()
            for (_, lower), (_, upper) in pairwise(members):
                if self.adjacent(lower, upper, axis):
                    pairs.append((lower, upper))
        return pairs

    def adjacent(self, lower: int, upper: int, axis: str) -> bool:
        a, b = self.program.statements[lower], self.program.statements[upper]
        for side in self.sides(lower, axis):
            if side.dim is None or side.fresh:
                continue
            if a.operands[side.position].slices[side.dim][1] != b.operands[side.position].slices[side.dim][0]:
                return False
        return True

    def merged_size(self, lower: int, upper: int, axis: str) -> int:
        """Size of ``axis`` in the merged statement."""
        return self._axis_size(lower, axis) + self._axis_size(upper, axis)

    def _axis_size(self, node: int, axis: str) -> int:
        stmt = self.program.statements[node]
        for side in self.sides(node, axis):
            if side.dim is not None:
                start, stop = stmt.operands[side.position].slices[side.dim]
                return stop - start
        return 0

    def blocker(self, lower: int, upper: int, axis: str) -> str | None:
        """Why an adjacent pair may not merge (rules 4 and 5), or None."""
        program = self.program
        op = program.statements[lower].op
        size = self.merged_size(lower, upper, axis)
        if not op.can_merge_dim(axis, size, program.target):
            limit = op.limit(axis, program.target)
            return f"{op.name} {axis} would be {size} > {limit} on {program.target.name}"
        first, second = sorted((lower, upper))
        if program.reaches(first, second):
            return f"statement {second} depends on statement {first}: merging would create a cycle"
        return None

    # -- the edit -----------------------------------------------------------------------
    def match(self, transform: str, lower: int, upper: int, axis: str) -> Match:
        """The match (with its edit) merging ``upper`` into ``lower`` along ``axis``."""
        program = self.program
        a, b = program.statements[lower], program.statements[upper]
        keeper, absorbed = min(lower, upper), max(lower, upper)
        kept = program.statements[keeper]
        operands = list(kept.operands)
        renames: dict[str, Rename] = {}
        for side in self.sides(lower, axis):
            pa, pb = a.operands[side.position], b.operands[side.position]
            if side.dim is None:
                continue
            if side.fresh:
                merged_var = kept.operands[side.position].var
                size_a = pa.slices[side.dim][1]
                shape = with_range(pa.slices, side.dim, (0, size_a + pb.slices[side.dim][1]))
                operands[side.position] = Operand(merged_var, shape)
                if pa.var != merged_var:
                    renames[pa.var] = Rename(merged_var)
                renames[pb.var] = Rename(merged_var, side.dim, size_a)
            else:
                operands[side.position] = Operand(pa.var, span(pa.slices, pb.slices))
        reads = frozenset(src for n in (lower, upper) for src in program.graph.pred[n]) - {lower, upper}
        mentions = frozenset(o.var for o in (*a.operands, *b.operands))
        size = self.merged_size(lower, upper, axis)
        return Match(
            transform=transform,
            nodes=(keeper, absorbed),
            edit=Edit(
                replace={keeper: kept._replace(operands=tuple(operands))},
                absorb={absorbed: keeper},
                renames=renames,
            ),
            reads=reads,
            mentions=mentions - set(renames),
            detail=f"{a.op.name} {axis} {size}: statement {absorbed} into {keeper}",
            program_hash=program.canonical_hash,
        )


class MergeTransform(Transform):
    """A transform merging adjacent same-op statements; subclasses set ``name`` and may
    restrict ``ops`` and ``axes``."""

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
