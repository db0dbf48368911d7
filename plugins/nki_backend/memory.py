"""On-chip memory of a lowered kernel: live ranges of tiles and peak bytes per partition.

A tile is live from its allocation to the last instruction that touches it (as the NKI
simulator counts). Intervals are in instruction positions of the straight-line
kernel; the peak is found by a sweep.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .ir import Alloc, Group, Tile, instructions, refs_of


@dataclass(frozen=True)
class Interval:
    """One tile's live range ``[first, last]`` and its size."""

    tile: Tile
    first: int
    last: int


@dataclass(frozen=True)
class Peak:
    """Peak live bytes per partition of one buffer, where it happens and what is live."""

    bytes: int
    position: int
    live: tuple[Interval, ...]


def live_intervals(groups: Sequence[Group]) -> list[Interval]:
    """Every tile's live range in ``groups`` (straight-line code)."""
    first: dict[Tile, int] = {}
    last: dict[Tile, int] = {}
    for position, instr in enumerate(instructions(groups)):
        if isinstance(instr, Alloc):
            first[instr.tile] = last[instr.tile] = position
            continue
        for ref in refs_of(instr):
            if isinstance(ref.base, Tile):
                last[ref.base] = position
    return [Interval(tile, start, last[tile]) for tile, start in first.items()]


def group_positions(groups: Sequence[Group]) -> dict[int, tuple[int, int]]:
    """Program statement -> ``(first, last)`` instruction position of its group."""
    spans: dict[int, tuple[int, int]] = {}
    position = 0
    for group in groups:
        end = position + len(group.instrs) - 1
        if group.node is not None:
            spans[group.node] = (position, end)
        position = end + 1
    return spans


def peak(intervals: Iterable[Interval], buffer: str, unit: int = 0) -> Peak:
    """The peak of ``buffer`` (``sbuf`` or ``psum``) over ``intervals``; with ``unit``, in
    bytes rounded up to whole units per tile (a PSUM tile takes whole banks)."""
    chosen = [iv for iv in intervals if iv.tile.buffer == buffer]

    def size(iv: Interval) -> int:
        used = iv.tile.bytes_per_partition
        return -(-used // unit) * unit if unit else used

    events = sorted(
        [(iv.first, 1, size(iv)) for iv in chosen] + [(iv.last + 1, 0, -size(iv)) for iv in chosen]
    )
    total = best = at = 0
    for position, _, delta in events:
        total += delta
        if total > best:
            best, at = total, position
    live = tuple(iv for iv in chosen if iv.first <= at <= iv.last)
    return Peak(best, at, live)
