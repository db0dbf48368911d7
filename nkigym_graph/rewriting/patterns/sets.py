"""Set patterns: statements of one op whose slices are adjacent along an axis.

``SetPattern("tensor_tensor", axis="free", op="add")`` matches adds that differ only in
where they sit along ``free``: same op, attributes and accumulation flag, the operands
without the axis the same data, those with it the same tensor with each statement's
range ending where the next one's starts (a destination each statement defines afresh
may differ: merging makes it one tile). Leave out the op to match every op, the axis to
match along each axis an op merges on (``SetPattern()``: what ``operand_merge`` merges).
The rules, the grouping (n log n: statements are grouped by signature and sorted by
coordinate, only neighbours can be adjacent) and the refusals (the op's size limit on
the target, one member reaching another) are in
``nkigym_graph.rewriting.patterns.adjacency``.

``pairs`` gives every mergeable adjacent pair (the unit a search steps through),
``runs`` whole runs of adjacent statements cut at the op's limit (what saturation
applies in one batch). Each is a ``Found`` whose ``nodes`` are in axis order and
whose ``axis`` is the one they are adjacent along. ``SetMatches`` keeps them per op and
axis (``sections``) so that a derived snapshot updates them from what its edit touched.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> program = tiled_matmul(128, 128, 512)  # four matmuls, each loading a 128 wide block of b
>>> loads = SetPattern("load", axis="free")
>>> [found.nodes for found in loads.runs(program)], [found.nodes for found in loads.pairs(program)]
([(2, 6, 10, 14)], [(2, 6), (6, 10), (10, 14)])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from nkigym_graph.errors import TransformError
from nkigym_graph.ir.memo import memo
from nkigym_graph.ir.ops.registry import all_ops
from nkigym_graph.rewriting.patterns.adjacency import MergeAnalysis
from nkigym_graph.rewriting.patterns.constraints import checked_op
from nkigym_graph.rewriting.patterns.sections import Section, Spec
from nkigym_graph.rewriting.patterns.tree import Found, Where, attrs_match

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

_ADJACENCY = ("patterns", "adjacency")
"""The ``Program.memo`` key of a snapshot's ``MergeAnalysis``."""


def adjacency(program: Program) -> MergeAnalysis:
    """``program``'s merge analysis, built once per snapshot (from its parent's, when
    that is known: ``MergeAnalysis`` keeps what the derivation left unchanged)."""
    return memo(program, _ADJACENCY, _merge_analysis)


def _merge_analysis(program: Program) -> MergeAnalysis:
    derivation = program.derivation
    parent = derivation.parent() if derivation is not None else None
    known = None if parent is None else parent.memo.get(_ADJACENCY)
    if known is None:  # analysed in full
        return MergeAnalysis(program).for_every_statement()
    return MergeAnalysis(program, known)


class SetPattern:
    """Same-op statements adjacent along an axis (see the module docstring)."""

    __slots__ = ("attrs", "axis", "op", "where")

    def __init__(
        self,
        op_name: str | None = None,
        /,
        *,
        axis: str | None = None,
        where: Where | None = None,
        **attrs: Any,
    ) -> None:
        op = checked_op("SetPattern", op_name, attrs)
        if axis is not None:
            axes = (
                op.mergeable_axes()
                if op is not None
                else frozenset().union(*(known.mergeable_axes() for known in all_ops().values()))
            )
            if axis not in axes:
                whose = f"{op_name} statements cannot" if op is not None else "no op's statements can"
                raise TransformError(
                    f"SetPattern({op_name!r}, axis={axis!r}): {whose} be adjacent along {axis!r}; "
                    f"{'its' if op is not None else 'the'} axes: {', '.join(sorted(axes)) or 'none'}"
                )
        self.op = op_name
        self.axis = axis
        self.where = where
        self.attrs = attrs

    def covered(self, program: Program) -> list[tuple[str, str, Sequence[int]]]:
        """``(op name, axis, the op's statements)`` for each op and axis the pattern
        covers, by op name and axis."""
        by_op = program.index.by_op
        names = sorted(by_op) if self.op is None else [self.op] if self.op in by_op else []
        out: list[tuple[str, str, Sequence[int]]] = []
        for name in names:
            nodes = by_op[name]
            axes = program[nodes[0]].op.mergeable_axes()
            if self.axis is None:
                chosen = sorted(axes)
            elif self.axis in axes:
                chosen = [self.axis]
            elif self.op is None:
                chosen = []
            else:
                raise TransformError(
                    f"set pattern: {name} statements cannot be adjacent along {self.axis!r}; "
                    f"its axes: {', '.join(sorted(axes)) or 'none'}"
                )
            out.extend((name, axis, nodes) for axis in chosen)
        return out

    def sections(self, program: Program) -> list[tuple[str, str, list[int]]]:
        """``covered`` with the members that satisfy the attribute constraints and
        ``where``, in program order."""
        return [
            (name, axis, [node for node in nodes if self.accepts(program, node)])
            for name, axis, nodes in self.covered(program)
        ]

    def pairs(self, program: Program) -> list[Found]:
        """Every mergeable adjacent pair, section by section, group by group."""
        return SetMatches.of(self, program).pairs()

    def runs(self, program: Program) -> list[Found]:
        """Maximal runs of adjacent statements, cut at the op's limit; a run in which one
        statement reaches another falls back to its mergeable pairs."""
        return SetMatches.of(self, program).runs()

    def accepts(self, program: Program, node: int) -> bool:
        """Whether statement ``node`` satisfies the attribute constraints and ``where``."""
        if self.attrs and not attrs_match(program[node], self.attrs):
            return False
        return self.where is None or self.where(program, node)

    def __repr__(self) -> str:
        attrs = "".join(f", {k}={v!r}" for k, v in self.attrs.items())
        return f"SetPattern({self.op!r}, axis={self.axis!r}{attrs})"


class SetMatches(NamedTuple):
    """A set pattern's matches in one snapshot, kept per (op, axis) section so that
    ``derived`` updates them along a derivation."""

    pattern: SetPattern
    program: Program
    sections: dict[tuple[str, str], Section]

    @classmethod
    def of(cls, pattern: SetPattern, program: Program) -> SetMatches:
        """The matches of ``pattern`` in ``program``, found in full."""
        analysis = adjacency(program)
        sections = {
            (name, axis): Section.build(analysis, members, axis)
            for name, axis, members in pattern.sections(program)
        }
        return cls(pattern, program, sections)

    def derived(self, program: Program) -> SetMatches | None:
        """The matches in ``program``, derived from ``self.program`` (None: it is not
        this snapshot's child): groups no changed statement joins or leaves are kept."""
        derivation = program.derivation
        if derivation is None or derivation.parent() is not self.program:
            return None
        pattern = self.pattern
        # a ``where`` may look at a statement's readers: recheck what changed around it too
        dirty = derivation.altered if pattern.where is None else derivation.dirty
        dirty_of: dict[str, list[int]] = {}
        for node in program.in_order(dirty):
            if pattern.accepts(program, node):
                dirty_of.setdefault(program[node].op.name, []).append(node)
        parent = self.program
        leaving_of: dict[str, list[int]] = {}  # what may leave a group, by the op it had
        for node in (*derivation.removed, *dirty):
            leaving_of.setdefault(parent[node].op.name, []).append(node)
        before, analysis = adjacency(parent), adjacency(program)
        sections = {}
        for name, axis, members in pattern.covered(program):
            old = self.sections.get((name, axis))
            sections[(name, axis)] = (
                Section.build(analysis, [n for n in members if pattern.accepts(program, n)], axis)
                if old is None
                else old.derived(
                    before, analysis, derivation, dirty, leaving_of.get(name, []), dirty_of.get(name, [])
                )
            )
        return SetMatches(pattern, program, sections)

    def pair_specs(self) -> list[Spec]:
        """Every mergeable pair as ``(axis, lower, upper)``, in the order of ``pairs``."""
        return [spec for section in self.sections.values() for spec in section.pair_specs()]

    def found(self, spec: Spec) -> Found:
        """The match of one pair spec."""
        axis, lower, upper = spec
        return _found(self.program, (lower, upper), axis)

    def pairs(self) -> list[Found]:
        return [self.found(spec) for spec in self.pair_specs()]

    def runs(self) -> list[Found]:
        analysis, program = adjacency(self.program), self.program
        out: list[Found] = []
        for (_, axis), section in self.sections.items():
            for group in sorted(section.groups.values(), key=lambda g: g.first):
                if group.pairs:  # a run of two or more holds a pair within the limit
                    out.extend(_found(program, run, axis) for run in analysis.chain_runs(group.members, axis))
        return out


def _found(program: Program, nodes: Sequence[int], axis: str) -> Found:
    return Found(min(nodes, key=program.order_key), nodes, {}, axis=axis)
