"""A derived snapshot's id -> position table, read through its parent's.

Building a snapshot's table (a dict of every id) costs O(statements): 25 ms at 4096^3,
on every search state, while a state looks up a few hundred ids. A derivation keeps
the order and only removes statements (an edited statement keeps its id and place),
so a position here is the parent's moved back by the removed statements before it.
``ShiftedPositions`` answers that way until it has answered ``LOOKUPS`` lookups, then
has its snapshot build the dict (a search that looks up millions of ids per state
pays the dict's speed, not a bisection per lookup).

>>> parent = {10: 0, 11: 1, 12: 2, 13: 3}
>>> table = ShiftedPositions(parent, frozenset({11}), lambda: None)
>>> table.get(10), table.get(11), table.get(13), 12 in table
(0, None, 2, True)
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Set
from typing import Protocol

LOOKUPS = 2048
"""Lookups a shifted table answers before its snapshot builds the dict."""
DEEPEST = 8
"""Shifted tables read through one another at most (past that, a snapshot builds its
dict: its ancestors may be gone, and their tables would never become dicts)."""


class Positions(Protocol):
    """An id -> position table (a dict, or a ``ShiftedPositions``)."""

    def get(self, node: int, default: None = None, /) -> int | None: ...

    def __contains__(self, node: object, /) -> bool: ...


class ShiftedPositions:
    """The positions of a derived snapshot from its parent's table (see the module
    docstring); ``built``: the snapshot's own dict, built and kept by the snapshot
    (None: go on shifting)."""

    __slots__ = ("built", "depth", "gone", "left", "parent", "removed", "table")
    depth: int
    """Shifted tables read through, this one included."""

    def __init__(self, parent: Positions, removed: Set[int], built: Callable[[], Positions | None]) -> None:
        self.parent = parent
        self.depth = parent.depth + 1 if isinstance(parent, ShiftedPositions) else 1
        self.removed = removed
        self.gone = sorted(at for at in map(parent.get, removed) if at is not None)
        self.built = built
        self.table: Positions | None = None  # the dict, once built
        self.left = LOOKUPS

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
        at = self.parent.get(node)
        return None if at is None else at - bisect_left(self.gone, at)

    def __contains__(self, node: object, /) -> bool:
        return isinstance(node, int) and self.get(node) is not None

    def __bool__(self) -> bool:
        return True
