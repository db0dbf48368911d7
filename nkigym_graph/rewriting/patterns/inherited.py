"""A cache handed down from the analysis of a snapshot to those of its children.

An ``Inherited`` maps keys to what was learned of one snapshot. A derived snapshot's
cache starts from its parent's without copying it: it shares the entries of the
nearest ancestor that owns them in full (``handed_down``) and lists the owners (a
statement id, a variable: ``owner(key)``) that changed on the way, whose shared
entries no longer hold; what it learns itself it keeps apart. Past ``FLATTEN``
changed owners a child copies the entries that still hold and starts afresh. An
ancestor may go on adding entries to what it shares: they hold for the child too
unless their owner changed.

>>> root = Inherited[str, int](lambda key: key)
>>> root.put("a", 1); root.put("b", 2)
>>> child = root.handed_down({"b"})
>>> child.get("a"), child.get("b", None)
(1, None)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

FLATTEN = 512
"""Changed owners a cache tracks before it copies the shared entries that still hold."""

_MISSING = object()


class Inherited(Generic[K, V]):
    """Entries of one snapshot over those shared with an ancestor (module docstring)."""

    __slots__ = ("_own", "_owner", "_shared", "_stale")

    def __init__(self, owner: Callable[[K], Hashable]) -> None:
        self._owner = owner
        self._own: dict[K, V] = {}
        self._shared: dict[K, V] | None = None
        self._stale: frozenset[Hashable] = frozenset()

    def get(self, key: K, default: object = _MISSING) -> V:
        """The entry of ``key``; ``default`` (or KeyError) when there is none."""
        found = self._own.get(key, _MISSING)
        if found is _MISSING and self._shared is not None and self._owner(key) not in self._stale:
            found = self._shared.get(key, _MISSING)
        if found is _MISSING:
            if default is _MISSING:
                raise KeyError(key)
            return default  # type: ignore[return-value]
        return found  # type: ignore[return-value]

    def put(self, key: K, value: V) -> None:
        self._own[key] = value

    def handed_down(self, changed: Iterable[Hashable]) -> Inherited[K, V]:
        """The cache of a child snapshot whose owners ``changed`` (statements altered or
        removed, variables touched)."""
        gone = frozenset(changed)
        child = Inherited[K, V](self._owner)
        owner = self._owner
        if self._shared is None:  # this cache owns its entries in full: share them
            child._shared, child._stale = self._own, gone
            return child
        stale = self._stale | gone
        own = {key: value for key, value in self._own.items() if owner(key) not in gone}
        if len(stale) > FLATTEN:
            flat = {key: value for key, value in self._shared.items() if owner(key) not in stale}
            flat.update(own)
            child._own = flat
            return child
        child._own, child._shared, child._stale = own, self._shared, stale
        return child
