"""Merge candidates kept per (op, axis) section, so a derived snapshot updates them.

A section groups the statements of one op by merge signature (see
``nkigym_graph.merge``); each group lists its members by coordinate and the adjacent
pairs within the op's limit, in stable ids (``nkigym_graph.analysis.StableIds``). A
rewrite changes the signatures of the statements it edits or whose variables it
touches (``Derivation.dirty``): only the groups those statements leave or join are
rebuilt; the others are kept as they are. A rewrite elsewhere can create or break a
path between two statements, but only through a dirty statement between them (edges
into the others are unchanged), so a pair's dependency verdict is kept unless a dirty
statement lies between its two statements.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from nkigym_graph.analysis import StableIds
from nkigym_graph.derivation import Derivation
from nkigym_graph.merge import Member, MergeAnalysis


class Group(NamedTuple):
    members: list[Member]
    """Sorted by coordinate, then node (nodes in stable ids)."""
    pairs: list[tuple[int, int]]
    """Adjacent consecutive members whose merge is within the limit (stable ids)."""
    first: int
    """The member earliest in program order (stable id)."""


class Section(NamedTuple):
    """The merge groups of one op along one axis."""

    axis: str
    groups: dict[tuple, Group]
    free: dict[tuple[int, int], bool]
    """Per pair (stable ids): whether neither statement reaches the other."""

    @classmethod
    def build(cls, analysis: MergeAnalysis, ids: StableIds, nodes: Iterable[int], axis: str) -> Section:
        found: dict[tuple, list[Member]] = {}
        for node in nodes:
            sig = analysis.signature(node, axis)
            if sig is not None:
                found.setdefault(sig[0], []).append((sig[1], node, sig[1] + analysis.size(node, axis)))
        groups = {key: _group(analysis, ids, members, axis) for key, members in found.items()}
        return cls(axis, groups, _verdicts(analysis, ids, groups, {}, []))

    def derived(
        self,
        before: MergeAnalysis,
        analysis: MergeAnalysis,
        ids: StableIds,
        derivation: Derivation,
        dirty_nodes: Sequence[int],
    ) -> Section:
        """This section in the snapshot ``derivation`` leads to (analysed by
        ``analysis``, with ``ids``); ``before`` analyses the parent; ``dirty_nodes``
        are the dirty statements of this section's op."""
        axis, dirty, groups = self.axis, derivation.dirty, self.groups
        affected = set()
        for old in (*derivation.gone, *(derivation.old_of[n] for n in dirty)):
            sig = before.signature(old, axis)
            if sig is not None and sig[0] in groups:
                affected.add(sig[0])
        joining: dict[tuple, list[Member]] = {}
        for node in dirty_nodes:
            sig = analysis.signature(node, axis)
            if sig is not None:
                affected.add(sig[0])
                joining.setdefault(sig[0], []).append((sig[1], node, sig[1] + analysis.size(node, axis)))
        kept = {key: group for key, group in groups.items() if key not in affected}
        here_of = ids.here_of
        for key in affected:
            previous = groups.get(key)
            members = [
                (c, here_of[n], e)
                for c, n, e in (previous.members if previous else ())
                if here_of[n] >= 0 and here_of[n] not in dirty
            ]
            members += joining.get(key, [])
            if members:
                kept[key] = _group(analysis, ids, members, axis)
        return Section(axis, kept, _verdicts(analysis, ids, kept, self.free, sorted(dirty)))

    def pair_specs(self, analysis: MergeAnalysis, ids: StableIds) -> list[tuple[str, int, int]]:
        """``(axis, lower, upper)`` of every mergeable pair (positions): groups in order
        of their first statement, pairs in coordinate order."""
        here_of, free = ids.here_of, self.free
        ordered = sorted((group.first, group.pairs) for group in self.groups.values() if group.pairs)
        return [
            (self.axis, here_of[lower], here_of[upper])
            for _, pairs in ordered
            for lower, upper in pairs
            if free[(lower, upper)]
        ]


def _verdicts(
    analysis: MergeAnalysis,
    ids: StableIds,
    groups: dict[tuple, Group],
    before: dict[tuple[int, int], bool],
    dirty: list[int],
) -> dict[tuple[int, int], bool]:
    """Whether each pair is free of dependencies: known from ``before`` unless a
    ``dirty`` position (ascending) lies between the two statements."""
    here_of = ids.here_of
    out = {}
    for group in groups.values():
        for pair in group.pairs:
            lower, upper = here_of[pair[0]], here_of[pair[1]]
            known = before.get(pair)
            if known is None or _between(dirty, lower, upper):
                known = analysis.dependency_blocker((lower, upper)) is None
            out[pair] = known
    return out


def _between(ascending: list[int], lower: int, upper: int) -> bool:
    """Whether some element lies in ``(lower, upper]``."""
    at = bisect.bisect_right(ascending, lower)
    return at < len(ascending) and ascending[at] <= upper


def _group(analysis: MergeAnalysis, ids: StableIds, members: list[Member], axis: str) -> Group:
    """A group from its members in positions; stored in stable ids."""
    members = sorted(members)
    base_of = ids.base_of
    size = {n: e - c for c, n, e in members}
    op = analysis.program.statements[members[0][1]].op
    pairs = [
        (base_of[lower], base_of[upper])
        for chain in analysis.chains(members, axis)
        for lower, upper in itertools.pairwise(chain)
        if analysis.size_blocker(op, axis, size[lower] + size[upper]) is None
    ]
    return Group([(c, base_of[n], e) for c, n, e in members], pairs, base_of[min(n for _, n, _ in members)])
