"""Peak live on-chip memory over the statement order.

A tile lives from the statement that defines it to its last use (read or write);
``peak_usage`` sweeps those intervals and returns, per buffer (``sbuf``, ``psum``),
the largest sum of live bytes per partition and the statement where it occurs.

>>> peak_usage([Interval("t0", "sbuf", 512, 0, 2), Interval("t1", "sbuf", 256, 1, 1),
...             Interval("t2", "sbuf", 1024, 3, 4)])
{'sbuf': Peak(bytes=1024, node=3, live=('t2',))}
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple


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


def peak_usage(intervals: Iterable[Interval]) -> dict[str, Peak]:
    """Per buffer, the peak of the live bytes per partition (see the module docstring)."""
    events: dict[str, list[tuple[int, int, int]]] = {}
    spans: dict[str, list[Interval]] = {}
    for iv in intervals:
        # allocation at ``start`` (sorted after the frees there), free after ``end``
        events.setdefault(iv.buffer, []).extend(((iv.start, 1, iv.bytes), (iv.end + 1, 0, -iv.bytes)))
        spans.setdefault(iv.buffer, []).append(iv)
    out: dict[str, Peak] = {}
    for buffer, evs in events.items():
        evs.sort()
        live = best = 0
        where = 0
        for node, _, delta in evs:
            live += delta
            if live > best:
                best, where = live, node
        names = tuple(sorted(iv.var for iv in spans[buffer] if iv.start <= where <= iv.end))
        out[buffer] = Peak(best, where, names)
    return out
