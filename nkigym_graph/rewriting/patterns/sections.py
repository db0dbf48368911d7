"""A set pattern's matches kept per (op, axis) section, so a derived snapshot updates them.

A section groups the statements of one op by merge signature (see
``nkigym_graph.rewriting.patterns.adjacency``); each group lists its members by coordinate and the adjacent
pairs within the op's limit, in statement ids (which statements keep across
derivations). A rewrite changes the signatures of the statements it edits or whose variables it
touches (``Derivation.altered``): only the groups those statements leave or join are
redone, the members that stay keeping their order (order keys hold along derivations)
and what the analysis knew of them (``MergeAnalysis.facts``); the other groups are kept
as they are. A rewrite elsewhere can create or break a path between two statements,
but only through a dirty statement between them (edges into the others are
unchanged), so a group's dependency verdicts are kept unless a dirty statement lies
within the group's span; only groups with pairs whose members depend on something can
have such verdicts change (``Section.linked``).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import NamedTuple

from nkigym_graph.ir.derivation import Derivation
from nkigym_graph.ir.overlay import REMOVED, over
from nkigym_graph.rewriting.patterns.adjacency import Member, MergeAnalysis, Signature

Spec = tuple[str, int, int]
"""A mergeable pair: ``(axis, lower, upper)`` (statement ids)."""


class Group(NamedTuple):
    members: list[Member]
    """Sorted by coordinate, then program order."""
    pairs: list[tuple[int, int]]
    """Adjacent consecutive members whose merge is within the limit."""
    free: tuple[bool, ...]
    """Per pair: whether neither statement reaches the other."""
    first: int
    """The order key (``Program.order_key``) of the member earliest in program order."""
    specs: tuple[Spec, ...]
    """The free pairs, in order."""
    sourceless: bool
    """No member depends on anything (loads): no path can ever join two of them."""

    last: int
    """The order key of the latest statement of its pairs (-1 without pairs)."""


class Section(NamedTuple):
    """The merge groups of one op along one axis."""

    axis: str
    groups: Mapping[Signature, Group]
    linked: frozenset[Signature]
    """The groups with pairs whose members depend on something: a rewrite between two
    of their members may change whether one reaches the other."""
    paired: frozenset[Signature]
    """The groups with free pairs (``Group.specs``): most groups of a large program
    have none, and ``pair_specs`` looks at these only."""

    @classmethod
    def build(cls, analysis: MergeAnalysis, nodes: Iterable[int], axis: str) -> Section:
        found: dict[Signature, list[Member]] = {}
        facts = analysis.facts
        for node in nodes:
            known = facts(node, axis)
            sig = known.signature
            if sig is not None:
                found.setdefault(sig[0], []).append((sig[1], node, sig[1] + known.size))
        order = _member_order(analysis.program.order_key)
        groups = {key: _group(analysis, sorted(members, key=order), axis) for key, members in found.items()}
        return cls(
            axis,
            groups,
            frozenset(key for key, group in groups.items() if _linked(group)),
            frozenset(key for key, group in groups.items() if group.specs),
        )

    def derived(
        self,
        before: MergeAnalysis,
        analysis: MergeAnalysis,
        derivation: Derivation,
        dirty: Set[int],
        leaving: Sequence[int],
        dirty_nodes: Sequence[int],
    ) -> Section:
        """This section in the snapshot ``derivation`` leads to (analysed by
        ``analysis``); ``before`` analyses the parent; ``dirty`` are the statements whose
        membership may have changed (``Derivation.altered`` or ``dirty``), ``leaving``
        those of them and of the removed ones that had this section's op in the parent
        (only they can leave its groups), ``dirty_nodes`` those of ``dirty`` that belong
        to this section."""
        axis, removed, groups = self.axis, derivation.removed, self.groups
        affected = set()
        for old in leaving:
            sig = before.signature(old, axis)
            if sig is not None and sig[0] in groups:
                affected.add(sig[0])
        joining: dict[Signature, list[Member]] = {}
        for node in dirty_nodes:
            known = analysis.facts(node, axis)
            sig = known.signature
            if sig is not None:
                affected.add(sig[0])
                joining.setdefault(sig[0], []).append((sig[1], node, sig[1] + known.size))
        changes: dict[Signature, Group] = {}  # the groups kept are the parent's (``over``)
        rank = analysis.program.order_key
        ascending = sorted(rank(node) for node in dirty)
        redone = set(affected)
        for key in self.linked:
            group = groups[key]
            if key not in affected and _between(ascending, group.first, group.last):
                changes[key] = _reverified(analysis, group, axis, ascending)
                redone.add(key)
        linked = set(self.linked)
        for key in affected:
            previous = groups.get(key)
            if previous is None:
                members = sorted(joining.get(key, []), key=_member_order(rank))
                if members:
                    changes[key] = _group(analysis, members, axis)
                continue
            changes[key] = REMOVED  # unless members remain
            # kept members keep their order keys, so their order: only the joining ones are placed
            members = [m for m in previous.members if m[1] not in removed and m[1] not in dirty]
            order = _member_order(rank)
            for member in joining.get(key, ()):
                bisect.insort(members, member, key=order)
            if members:
                # kept members keep their edges: a group without sources gains one by a joining member only
                sourceless = None
                if previous.sourceless:
                    sourceless = not any(analysis.facts(m[1], axis).sourced for m in joining.get(key, ()))
                changes[key] = _group(analysis, members, axis, sourceless)
        kept = over(groups, changes)
        for key in affected:
            now = kept.get(key)
            if now is not None and _linked(now):
                linked.add(key)
            else:
                linked.discard(key)
        paired = set(self.paired)
        for key in redone:
            now = kept.get(key)
            if now is not None and now.specs:
                paired.add(key)
            else:
                paired.discard(key)
        return Section(axis, kept, frozenset(linked), frozenset(paired))

    def pair_specs(self) -> list[Spec]:
        """Every mergeable pair: groups in order of their first statement, pairs along
        their chains."""
        groups = self.groups
        ordered = sorted((groups[key].first, groups[key].specs) for key in self.paired)
        return [spec for _, specs in ordered for spec in specs]


def _linked(group: Group) -> bool:
    """Whether ``group`` belongs to ``Section.linked``."""
    return bool(group.pairs) and not group.sourceless


def _member_order(rank: Callable[[int], int]) -> Callable[[Member], tuple[int, int, int]]:
    """The order of a group's members: by coordinate, then program order."""
    return lambda m: (m[0], rank(m[1]), m[2])


def _group(
    analysis: MergeAnalysis, members: list[Member], axis: str, sourceless: bool | None = None
) -> Group:
    """A group from its members, sorted (``_member_order``); ``sourceless`` when known."""
    rank = analysis.program.order_key
    if len(members) == 1 and members[0][0] != members[0][2]:  # no pairs
        node = members[0][1]
        alone = not analysis.facts(node, axis).sourced if sourceless is None else sourceless
        return Group(members, [], (), rank(node), (), alone, -1)
    size = {n: e - c for c, n, e in members}
    op = analysis.statement(members[0][1]).op
    bound = analysis.smallest_merge(op, axis)
    if bound is not None and sum(sorted(size.values())[:2]) > bound:
        pairs = []  # no two members fit in one statement (matmul M, load partitions on Trn2)
    else:
        pairs = [
            (lower, upper)
            for chain in analysis.chains(members, axis)
            for lower, upper in itertools.pairwise(chain)
            if analysis.size_blocker(op, axis, size[lower] + size[upper]) is None
        ]
    if sourceless is None:
        sourceless = not any(analysis.facts(n, axis).sourced for _, n, _ in members)
    # without sources no member can reach another
    free = (
        (True,) * len(pairs) if sourceless else tuple(analysis.dependency_blocker(p) is None for p in pairs)
    )
    return Group(
        members,
        pairs,
        free,
        min([rank(n) for _, n, _ in members]),
        _specs(axis, pairs, free),
        sourceless,
        max((rank(upper) for _, upper in pairs), default=-1),
    )


def _reverified(analysis: MergeAnalysis, group: Group, axis: str, dirty: list[int]) -> Group:
    """``group`` with the dependency verdicts redone of the pairs around a ``dirty``
    statement (``dirty``: their order keys, ascending)."""
    rank = analysis.program.order_key
    free = tuple(
        analysis.dependency_blocker(pair) is None if _between(dirty, rank(pair[0]), rank(pair[1])) else known
        for pair, known in zip(group.pairs, group.free, strict=True)
    )
    if free == group.free:
        return group
    return group._replace(free=free, specs=_specs(axis, group.pairs, free))


def _specs(axis: str, pairs: list[tuple[int, int]], free: tuple[bool, ...]) -> tuple[Spec, ...]:
    return tuple((axis, lower, upper) for (lower, upper), ok in zip(pairs, free, strict=True) if ok)


def _between(ascending: list[int], lower: int, upper: int) -> bool:
    """Whether some element lies in ``(lower, upper]``."""
    at = bisect.bisect_right(ascending, lower)
    return at < len(ascending) and ascending[at] <= upper
