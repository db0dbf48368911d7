"""Slice arithmetic on explicit per-dimension ``(start, stop)`` ranges.

Every operand carries its slices explicitly: ``a[0:128, 128:256]`` is
``((0, 128), (128, 256))``. The helpers here are the only place that reasons about
ranges, so transforms and the dependency builder share one definition of "overlap",
"contains" and "span".

>>> overlaps(((0, 128), (0, 128)), ((0, 128), (128, 256)))
False
>>> span(((0, 128), (0, 128)), ((0, 128), (128, 256)))
((0, 128), (0, 256))
"""

from __future__ import annotations

from collections.abc import Sequence

Range = tuple[int, int]
Slices = tuple[Range, ...]


def full(shape: Sequence[int]) -> Slices:
    """The slices that cover a whole tensor of ``shape``."""
    return tuple((0, int(n)) for n in shape)


def volume(slices: Slices) -> int:
    """Number of elements the slices cover."""
    n = 1
    for start, stop in slices:
        n *= stop - start
    return n


def overlaps(a: Slices, b: Slices) -> bool:
    """Whether two regions of the same tensor share at least one element."""
    if len(a) == 2:  # the common case, unrolled
        (a0, a1), (a2, a3) = a
        (b0, b1), (b2, b3) = b
        return a0 < b1 and b0 < a1 and a2 < b3 and b2 < a3
    return all(sa < eb and sb < ea for (sa, ea), (sb, eb) in zip(a, b, strict=True))


def contains(outer: Slices, inner: Slices) -> bool:
    """Whether ``inner`` lies entirely within ``outer``."""
    if outer == inner:
        return True
    return all(so <= si and ei <= eo for (so, eo), (si, ei) in zip(outer, inner, strict=True))


def intersection(a: Slices, b: Slices) -> Slices | None:
    """The common region, or None if disjoint."""
    out = []
    for (sa, ea), (sb, eb) in zip(a, b, strict=True):
        lo, hi = max(sa, sb), min(ea, eb)
        if lo >= hi:
            return None
        out.append((lo, hi))
    return tuple(out)


def span(a: Slices, b: Slices) -> Slices:
    """The smallest region covering both."""
    return tuple((min(sa, sb), max(ea, eb)) for (sa, ea), (sb, eb) in zip(a, b, strict=True))


def format_slices(slices: Slices) -> str:
    """``((0, 128), (0, 256))`` -> ``"0:128, 0:256"``."""
    return ", ".join(f"{start}:{stop}" for start, stop in slices)
