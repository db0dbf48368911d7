"""Which stretches of a period loop rolling must look at again.

A *stretch* of period ``p`` is a maximal range of units where ``key[i] == key[i + p]``
for at least ``p`` consecutive ``i`` (:func:`stretches_from`). Trying period ``p``, the
roller (:mod:`.rolling`) looks at every stretch of ``p`` in order and folds the boxes
it finds. What it finds in a stretch depends only on the stretch's units, and where a
stretch ``[s, e)`` begins and ends only on the keys of units ``s - 1`` to ``e``: a unit
there is *near* the stretch. So a stretch that the roller looked at and found nothing
in still has nothing while no unit near it changes: a restart after a fold need only
look at the stretches near the units that changed since
(:attr:`.unit_list.UnitList.changed`) and at those it did not reach the last time it
tried the period. :class:`Sweep` keeps that, per period, and yields the stretches that
may fold in the order the roller takes them.
"""

from __future__ import annotations

import heapq
import sys
from collections.abc import Iterator

from .unit_list import UnitList

Stretch = tuple[int, int]
"""``[start, end)`` positions of a stretch."""

END = sys.maxsize
"""A frontier past every label: every stretch was looked at."""


class Sweep:
    """What the roller knows about the stretches of one period: every stretch that
    starts before the unit labelled :attr:`frontier` and that no *pending* unit is near
    (:attr:`carried`, and :attr:`.UnitList.changed` from :attr:`seen` on) has nothing to
    fold. (A replaced unit's label stands for the position where it was.)"""

    def __init__(self) -> None:
        self.frontier = -1
        """Label of the first unit where the stretches starting there or later were not
        looked at (-1: none was; :data:`END`: all were)."""
        self.seen = 0
        """How many of the list's changes this sweep has taken into account."""
        self.carried: list[int] = []
        """Labels of changed units whose stretches were not looked at since."""
        self._pending: list[tuple[int, int]] = []
        self._mark = 0

    def start(self, units: UnitList, period: int) -> Iterator[Stretch]:
        """Begin a look at the stretches of ``period``: those that may fold, by start."""
        self._mark = len(units.changed)
        pending: dict[int, int] = {}  # position -> a label there (replaced units share one)
        if self.frontier != -1:  # (else every stretch is looked at)
            for label in {*self.carried, *units.changed[self.seen : self._mark]}:
                pending.setdefault(units.position(label), label)
        self._pending = sorted(pending.items())
        first = len(units) if self.frontier == END else units.position(self.frontier)
        near = stretches_near(units.keys, period, [position for position, _ in self._pending])
        return _unique(heapq.merge(near, stretches_from(units.keys, period, first)))

    def finish(self, units: UnitList, stop: int | None = None) -> None:
        """End the look begun by :meth:`start` (before the pass changes any position): it
        took every stretch (``stop`` None) or those starting before position ``stop``."""
        self.seen = self._mark
        if stop is None or stop >= len(units):
            self.carried, self.frontier = [], END
            return
        # a change at position x is next to stretches that start at x + 1 at the latest
        self.carried = [label for position, label in self._pending if position + 1 >= stop]
        self.frontier = max(self.frontier, units.labels[stop])


def _unique(stretches: Iterator[Stretch]) -> Iterator[Stretch]:
    """``stretches`` (by start) without repeats: one near a change beyond the frontier comes twice."""
    last = -1
    for stretch in stretches:
        if stretch[0] != last:
            last = stretch[0]
            yield stretch


def stretches_from(keys: list[int], period: int, first: int = 0) -> Iterator[Stretch]:
    """Stretches of ``period`` in ``keys`` that start at position ``first`` or later."""
    last = len(keys) - period - 1  # the last i with a key[i + period]
    i = first
    while 0 < i <= last and keys[i - 1] == keys[i - 1 + period]:
        i += 1  # past the run of equal keys that began before first
    while i <= last:
        if keys[i] != keys[i + period]:
            i += 1
            continue
        j = i
        while j <= last and keys[j] == keys[j + period]:
            j += 1
        if j - i >= period:
            yield (i, j + period)
        i = j + 1


def stretches_near(keys: list[int], period: int, positions: list[int]) -> list[Stretch]:
    """Stretches of ``period`` in ``keys`` whose units or bounding keys (the unit before
    and the unit after) include one of ``positions`` (ascending), by start."""
    last = len(keys) - period - 1
    found: list[Stretch] = []
    reach = 0  # positions below reach are in runs of equal keys found already
    for position in positions:
        # a stretch [s, e) from the run s <= i < e - period is near x when s - 1 <= x <= e
        i, stop = max(position - period - 1, reach), min(position + 1, last)
        while i <= stop:
            if keys[i] != keys[i + period]:
                i += 1
                continue
            start = i
            while start > 0 and keys[start - 1] == keys[start - 1 + period]:
                start -= 1
            j = i
            while j <= last and keys[j] == keys[j + period]:
                j += 1
            if j - start >= period:
                found.append((start, j + period))
            i = reach = j + 1
    return found
