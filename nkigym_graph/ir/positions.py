"""A derived snapshot's id -> position table, read through an ancestor's.

Building a snapshot's table (a dict of every id) costs O(statements): 25 ms at 4096^3,
on every search state, while a state looks up a few hundred ids. A derivation keeps
the order and only removes statements (an edited statement keeps its id and place),
so a position here is an ancestor's moved back by the statements removed since that
lie before it. ``ShiftedPositions`` answers that way until it has answered ``LOOKUPS``
lookups, then has its snapshot build the dict (a search that looks up millions of ids
per state pays the dict's speed, not a bisection per lookup).

>>> ancestor = {10: 0, 11: 1, 12: 2, 13: 3}
>>> table = ShiftedPositions.of(ancestor, frozenset({11}), lambda: None, SMALLEST)
>>> table.get(10), table.get(11), table.get(13), 12 in table
(0, None, 2, True)
>>> later = ShiftedPositions.of(table, frozenset({10}), lambda: None, SMALLEST)
>>> later.get(12), later.get(13), later.removed == {10, 11}
(0, 1, True)
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Set
from typing import Protocol

LOOKUPS = 2048
"""Lookups a shifted table answers before its snapshot builds the dict."""
MOST_REMOVED = 1024
"""Statements removed since the ancestor, past which a snapshot builds its dict."""
SMALLEST = 4 * LOOKUPS
"""Statements below which a snapshot builds its dict at once: a shifted lookup costs
about as much as putting two statements in a dict, so shifting pays on large
snapshots only."""


class Positions(Protocol):
    """An id -> position table (a dict, or a ``ShiftedPositions``)."""

    def get(self, node: int, default: None = None, /) -> int | None: ...

    def __contains__(self, node: object, /) -> bool: ...


class ShiftedPositions:
    """The positions of a derived snapshot from an ancestor's dict (see the module
    docstring); ``built``: the snapshot's own dict, built and kept by the snapshot
    (None: the snapshot is gone, go on shifting)."""

    __slots__ = ("base", "built", "gone", "left", "removed", "table")

    def __init__(
        self, base: dict[int, int], removed: Set[int], gone: list[int], built: Callable[[], Positions | None]
    ) -> None:
        self.base = base
        self.removed = removed
        """The ancestor's statements removed since (ids)."""
        self.gone = gone
        """Their positions in the ancestor, ascending."""
        self.built = built
        self.table: Positions | None = None  # the dict, once built
        self.left = LOOKUPS

    @classmethod
    def of(
        cls, parent: Positions, removed: Set[int], built: Callable[[], Positions | None], statements: int
    ) -> ShiftedPositions | None:
        """The table of a snapshot of ``statements`` derived from one whose table is
        ``parent`` by removing ``removed`` (None: a small snapshot, or too many removed
        since the ancestor)."""
        if statements < SMALLEST:
            return None
        if isinstance(parent, ShiftedPositions) and isinstance(parent.table, dict):
            parent = parent.table
        since: Set[int]
        if isinstance(parent, dict):
            base, since, gone = parent, frozenset(removed), []
        elif isinstance(parent, ShiftedPositions):
            base, since, gone = parent.base, parent.removed | removed, list(parent.gone)
        else:
            return None
        if len(since) > MOST_REMOVED:
            return None
        for node in removed:
            at = base.get(node)
            if at is not None:
                insort(gone, at)
        return cls(base, since, gone, built)

    def get(self, node: int, default: None = None, /) -> int | None:
        """The position of ``node`` (None: not in the snapshot)."""
        self.left -= 1
        if self.left < 0:
            if self.table is None:
                self.table = self.built()
            if self.table is not None:
                return self.table.get(node)
        if node in self.removed:
            return None
        at = self.base.get(node)
        return None if at is None else at - bisect_left(self.gone, at)

    def __contains__(self, node: object, /) -> bool:
        return isinstance(node, int) and self.get(node) is not None

    def __bool__(self) -> bool:
        return True
