"""Peak live on-chip memory over the statement order.

A tile lives from the statement that defines it to its last use (read or write);
``peak_usage`` sweeps those intervals and returns, per buffer (``sbuf``, ``psum``),
the largest sum of live bytes per partition and the statement where it first occurs.

>>> peak_usage([Interval("t0", "sbuf", 512, 0, 2), Interval("t1", "sbuf", 256, 1, 1),
...             Interval("t2", "sbuf", 1024, 3, 4)])
{'sbuf': Peak(bytes=1024, node=3, live=('t2',))}

``peak_live`` is the sweep alone, on columns (a cost model's hot path): the live sum at
each statement is a running sum of allocations at starts and frees after ends, in time
linear in the statements.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike


class Interval(NamedTuple):
    """Tile ``var`` occupies ``bytes`` per partition of ``buffer`` from ``start`` to ``end``."""

    var: str
    buffer: str
    bytes: int
    start: int
    end: int


class Peak(NamedTuple):
    """The largest live total of one buffer, where it happens, and the tiles then live."""

    bytes: int
    node: int
    live: tuple[str, ...]


def peak_live(starts: ArrayLike, ends: ArrayLike, sizes: ArrayLike) -> tuple[int, int]:
    """The largest sum of ``sizes[i]`` over the intervals ``starts[i]..ends[i]`` (inclusive)
    live at one statement, and the first statement where it is reached ((0, 0) for none)."""
    starts, ends, sizes = np.asarray(starts), np.asarray(ends), np.asarray(sizes, dtype=np.float64)
    if not len(starts):
        return 0, 0
    length = int(ends.max()) + 2
    live = np.cumsum(
        np.bincount(starts, weights=sizes, minlength=length)
        - np.bincount(ends + 1, weights=sizes, minlength=length)
    )  # exact: integers far below 2**53
    where = int(np.argmax(live))
    return int(live[where]), where


def peak_live_by(
    starts: ArrayLike, ends: ArrayLike, sizes: ArrayLike, groups: ArrayLike, count: int
) -> list[tuple[int, int] | None]:
    """``peak_live`` of the intervals of each group ``0 .. count - 1`` (``groups[i]``:
    the group of interval ``i``, e.g. its buffer) in one sweep; None for a group without
    intervals."""
    starts, ends, groups = np.asarray(starts), np.asarray(ends), np.asarray(groups)
    sizes = np.asarray(sizes, dtype=np.float64)
    if not len(starts):
        return [None] * count
    length = int(ends.max()) + 2
    base = groups * length
    # one running sum over the groups end to end: each group's intervals all close
    # within its row, so the sum is back at 0 where the next group's row starts (exact:
    # integers far below 2**53, summed as integers: faster)
    delta = np.bincount(base + starts, weights=sizes, minlength=count * length) - np.bincount(
        base + ends + 1, weights=sizes, minlength=count * length
    )
    live = np.cumsum(delta.astype(np.int64)).reshape(count, length)
    where = np.argmax(live, axis=1).tolist()
    present = np.bincount(groups, minlength=count).tolist()
    return [(int(live[group, at]), at) if present[group] else None for group, at in enumerate(where)]


def live_at(node: int, intervals: Iterable[Interval]) -> tuple[str, ...]:
    """The tiles live at statement ``node``, sorted."""
    return tuple(sorted(iv.var for iv in intervals if iv.start <= node <= iv.end))


def peak_usage(intervals: Iterable[Interval]) -> dict[str, Peak]:
    """Per buffer, the peak of the live bytes per partition (see the module docstring)."""
    spans: dict[str, list[Interval]] = {}
    for iv in intervals:
        spans.setdefault(iv.buffer, []).append(iv)
    out: dict[str, Peak] = {}
    for buffer, ivs in spans.items():
        best, where = peak_live([iv.start for iv in ivs], [iv.end for iv in ivs], [iv.bytes for iv in ivs])
        out[buffer] = Peak(best, where, live_at(where, ivs))
    return out
