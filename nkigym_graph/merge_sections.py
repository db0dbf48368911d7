"""Merge candidates kept per (op, axis) section, so a derived snapshot updates them.

A section groups the statements of one op by merge signature (see
``nkigym_graph.merge``); each group lists its members by coordinate and the adjacent
pairs within the op's limit, in stable ids (``nkigym_graph.analysis.StableIds``). A
rewrite changes the signatures of the statements it edits or whose variables it
touches (``Derivation.dirty``): only the groups those statements leave or join are
rebuilt; the others are kept as they are. The dependency check is redone for every
pair, as a rewrite elsewhere can create a path between two statements.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from nkigym_graph.analysis import StableIds
from nkigym_graph.derivation import Derivation
from nkigym_graph.merge import MergeAnalysis

Member = tuple[int, int]
"""``(coordinate along the axis, node)``."""


class Group(NamedTuple):
    members: list[Member]
    """Sorted by coordinate, then node (stable ids)."""
    pairs: list[tuple[int, int]]
    """Adjacent consecutive members whose merge is within the limit (stable ids)."""
    first: int
    """The member earliest in program order (stable id)."""


class Section(NamedTuple):
    """The merge groups of one op along one axis."""

    axis: str
    groups: dict[tuple, Group]

    @classmethod
    def build(cls, analysis: MergeAnalysis, ids: StableIds, nodes: Iterable[int], axis: str) -> Section:
        found: dict[tuple, list[Member]] = {}
        for node in nodes:
            sig = analysis.signature(node, axis)
            if sig is not None:
                found.setdefault(sig[0], []).append((sig[1], node))
        groups = {key: _group(analysis, ids, members, axis) for key, members in found.items()}
        return cls(axis, groups)

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
                joining.setdefault(sig[0], []).append((sig[1], node))
        kept = {key: group for key, group in groups.items() if key not in affected}
        here_of = ids.here_of
        for key in affected:
            previous = groups.get(key)
            members = [
                (c, here_of[n])
                for c, n in (previous.members if previous else ())
                if here_of[n] >= 0 and here_of[n] not in dirty
            ]
            members += joining.get(key, [])
            if members:
                kept[key] = _group(analysis, ids, members, axis)
        return Section(axis, kept)

    def pair_specs(self, analysis: MergeAnalysis, ids: StableIds) -> list[tuple[str, int, int]]:
        """``(axis, lower, upper)`` of every mergeable pair (positions): groups in order
        of their first statement, pairs in coordinate order."""
        here_of = ids.here_of
        ordered = sorted((group.first, group.pairs) for group in self.groups.values() if group.pairs)
        out = []
        for _, pairs in ordered:
            for lower, upper in pairs:
                pair = (here_of[lower], here_of[upper])
                if analysis.dependency_blocker(pair) is None:
                    out.append((self.axis, *pair))
        return out


def _group(analysis: MergeAnalysis, ids: StableIds, members: list[Member], axis: str) -> Group:
    """A group from its members in positions; stored in stable ids."""
    members = sorted(members)
    nodes = [n for _, n in members]
    base_of = ids.base_of
    pairs = [
        (base_of[lower], base_of[upper])
        for lower, upper in itertools.pairwise(nodes)
        if analysis.adjacent(lower, upper, axis) and analysis.limit_blocker((lower, upper), axis) is None
    ]
    return Group([(c, base_of[n]) for c, n in members], pairs, base_of[min(nodes)])
