"""``Overlay``: a read-only mapping that is a base mapping with a few entries set or
removed, so a derived snapshot shares its parent's per-statement table instead of
copying it (a copy of 100k entries costs milliseconds: it touches every value).

An overlay of an overlay keeps the first's base and merges the two sets of changes
(lookups go through two dictionaries at most); once the changes grow past a fraction
of the base the overlay is a plain dict again, and a small base is copied, not shared
(``over``). Neither the base nor an overlay's changes are modified once the overlay
is made.

>>> base = {1: "a", 2: "b", 3: "c"}
>>> child = over(base, {2: "B", 4: "d", 3: REMOVED})
>>> dict(child), base
({1: 'a', 2: 'B', 4: 'd'}, {1: 'a', 2: 'b', 3: 'c'})
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, TypeVar, cast

K = TypeVar("K")
V = TypeVar("V")

REMOVED: Any = object()
"""A change that removes the base's entry."""
_GONE = REMOVED
FLATTEN_AT = 8
"""An overlay holding more changes than ``1 / FLATTEN_AT`` of its base's entries (and
more than ``FLATTEN_MIN``) is made a plain dict."""
FLATTEN_MIN = 1024
SHARED_FROM = 8192
"""Entries a base must hold for ``over`` to share it: a smaller one is copied (a dict
reads faster than an overlay, and the copy is cheap)."""


class Overlay(Mapping[K, V]):
    """``base`` with ``changes`` applied (an entry set, or removed: ``REMOVED``)."""

    __slots__ = ("_base", "_changes", "_len")

    def __init__(self, base: Mapping[K, V], changes: dict[K, V]) -> None:
        self._base = base
        self._changes = changes
        size = len(base)
        for key, value in changes.items():
            if key in base:
                size -= value is _GONE
            else:
                size += value is not _GONE
        self._len = size

    def __getitem__(self, key: K) -> V:
        value = self._changes.get(key, _GONE)
        if value is _GONE:
            if key in self._changes:
                raise KeyError(key)
            return self._base[key]
        return cast(V, value)

    def get(self, key: K, default: Any = None) -> Any:
        value = self._changes.get(key, _GONE)
        if value is _GONE:
            return default if key in self._changes else self._base.get(key, default)
        return value

    def __contains__(self, key: object) -> bool:
        value = self._changes.get(cast(K, key), _GONE)
        if value is _GONE:
            return key not in self._changes and key in self._base
        return True

    def __len__(self) -> int:
        return self._len

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (list(self.items()),))  # a plain dict: ``REMOVED`` is this process's

    def __iter__(self) -> Iterator[K]:
        changes = self._changes
        for key in self._base:
            if changes.get(key) is not _GONE:
                yield key
        for key, value in changes.items():
            if value is not _GONE and key not in self._base:
                yield key


def over(base: Mapping[K, V], changes: Mapping[K, V]) -> Mapping[K, V]:
    """``base`` with ``changes`` applied (an entry set, or removed: ``REMOVED``);
    ``base`` is not modified."""
    if isinstance(base, Overlay):
        merged = base._changes.copy()
        merged.update(changes)
        root = base._base
    else:
        merged, root = dict(changes), base
    if len(root) < SHARED_FROM or (len(merged) > FLATTEN_MIN and FLATTEN_AT * len(merged) > len(root)):
        # a dict's own copy clones its table (``dict(root)`` reinserts every entry when
        # the table has holes, as one that lost entries to an edit does: 6x slower)
        flat = root.copy() if isinstance(root, dict) else dict(root)
        for key, value in merged.items():
            if value is _GONE:
                flat.pop(key, None)
            else:
                flat[key] = value
        return flat
    return Overlay(root, merged)
