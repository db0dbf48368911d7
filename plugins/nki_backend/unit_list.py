"""The list of units loop rolling folds, kept with what each of its passes looks up.

A pass of the roller (:mod:`.rolling`) needs the units' keys, the distances between
consecutive units of equal key (the periods it tries), the units that use a buffer (a
fold's users) and which units changed since an earlier pass (:mod:`.sweeps`). A fold
changes a few units of a long list, so :class:`UnitList` updates these when units are
replaced instead of computing them again from the whole list.

Each unit carries a *label*, an integer that grows along the list and that a unit
replacing others inherits from the first of them; unlike a position, it stays the same
when earlier units are folded (:meth:`UnitList.position` finds its position).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise

from .blocks import referenced
from .ir import Unit


class UnitList:
    """Units in kernel order with their keys (``key``: a unit's literal skeleton) and labels."""

    def __init__(self, units: Sequence[Unit], key: Callable[[Unit], int]) -> None:
        self._key = key
        self.units: list[Unit] = list(units)
        self.keys: list[int] = [key(unit) for unit in self.units]
        self.labels: list[int] = list(range(len(self.units)))
        self.changed: list[int] = []
        """Labels of the units that replaced others, in the order they came."""
        self._occurrences: dict[int, list[int]] = {}
        """Key -> labels of its units."""
        self._gaps: Counter[int] = Counter()
        """Distance between consecutive units of one key -> how many pairs are that far apart."""
        self._references: dict[int, frozenset[int]] = {}
        """Label -> identities of the buffers its unit reads or writes."""
        self._users: dict[int, set[int]] = {}
        """Buffer identity -> labels of the units that read or write it."""
        for label, (unit, unit_key) in enumerate(zip(self.units, self.keys, strict=True)):
            self._occurrences.setdefault(unit_key, []).append(label)
            self._index(label, unit)
        for labels in self._occurrences.values():
            self._count(labels, 1)

    def __len__(self) -> int:
        return len(self.units)

    def position(self, label: int) -> int:
        """The position of the unit with ``label`` (of a replaced one: of the first unit after it)."""
        return bisect_left(self.labels, label)

    def periods(self) -> list[int]:
        """The distances from each unit to the next unit with the same key, ascending."""
        return sorted(self._gaps)

    def users(self, idents: Iterable[int]) -> dict[int, list[int]]:
        """Buffer identity (of ``idents``) -> positions of the units that read or write it."""
        found: dict[int, list[int]] = {}
        for ident in idents:
            labels = self._users.get(ident)
            if labels:
                found[ident] = sorted(map(self.position, labels))
        return found

    def replace(self, start: int, stop: int, units: Sequence[Unit]) -> None:
        """Put ``units`` (one to ``stop - start`` of them) in place of ``self.units[start:stop]``;
        they take the first labels of the units they replace, which :attr:`changed` records."""
        labels = self.labels[start : start + len(units)]
        keys = [self._key(unit) for unit in units]
        for label in self.labels[start:stop]:
            self._unindex(label)
        if keys != self.keys[start:stop]:  # (a rewritten unit keeps its key)
            self._splice(start, stop, labels, keys)
        self.units[start:stop] = units
        for label, unit in zip(labels, units, strict=True):
            self._index(label, unit)
        self.changed += labels

    # -- periods ----------------------------------------------------------------------
    def _splice(self, start: int, stop: int, labels: list[int], keys: list[int]) -> None:
        """Splice the labels and keys of ``start:stop`` into ``labels`` and ``keys``, keeping
        :attr:`_gaps` and :attr:`_occurrences` up to date: the gaps that change are those
        of keys in the range or put there, and those that span the range (one pass over
        the distinct keys, which are few: one per shape of group or loop)."""
        first, last = self.labels[start], self.labels[stop - 1]
        shift = len(labels) - (stop - start)
        touched = set(self.keys[start:stop]) | set(keys)
        spans: dict[int, tuple[int, int]] = {}
        for key, occurrences in self._occurrences.items():
            lo, hi = bisect_left(occurrences, first), bisect_right(occurrences, last)
            if key in touched:
                spans[key] = (lo, hi)
                self._count(occurrences[max(lo - 1, 0) : hi + 1], -1)
            elif 0 < lo < len(occurrences):  # a pair of units on either side: it comes closer
                gap = self.position(occurrences[lo]) - self.position(occurrences[lo - 1])
                self._add_gap(gap, -1)
                self._add_gap(gap + shift, 1)
        self.labels[start:stop] = labels
        self.keys[start:stop] = keys
        for key in touched:
            occurrences = self._occurrences.setdefault(key, [])
            lo, hi = spans.get(key, (bisect_left(occurrences, first),) * 2)
            inside = [label for label, unit_key in zip(labels, keys, strict=True) if unit_key == key]
            occurrences[lo:hi] = inside
            self._count(occurrences[max(lo - 1, 0) : lo + len(inside) + 1], 1)
            if not occurrences:
                del self._occurrences[key]

    def _count(self, labels: list[int], sign: int) -> None:
        """Add (``sign`` 1) or remove (-1) the gaps between consecutive ``labels`` (one key's)."""
        positions = [self.position(label) for label in labels]
        for before, after in pairwise(positions):
            self._add_gap(after - before, sign)

    def _add_gap(self, gap: int, sign: int) -> None:
        count = self._gaps[gap] + sign
        if count:
            self._gaps[gap] = count
        else:
            del self._gaps[gap]

    # -- users ------------------------------------------------------------------------
    def _index(self, label: int, unit: Unit) -> None:
        found = self._references[label] = frozenset(referenced(unit))
        for ident in found:
            self._users.setdefault(ident, set()).add(label)

    def _unindex(self, label: int) -> None:
        for ident in self._references.pop(label):
            users = self._users[ident]
            users.discard(label)
            if not users:
                del self._users[ident]
