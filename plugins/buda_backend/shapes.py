"""Tile arithmetic: Buda tensors are whole 32x32 tiles; smaller edges are padded."""

from __future__ import annotations

TILE = 32


def padded(size: int) -> int:
    """``size`` rounded up to whole tiles."""
    return -(-size // TILE) * TILE


def tiles(size: int) -> int:
    """Number of tiles along an axis of ``size`` elements."""
    return -(-size // TILE)


def tile_shape(shape: tuple[int, int]) -> tuple[int, int]:
    """``(rows, cols)`` in tiles."""
    return (tiles(shape[0]), tiles(shape[1]))


def divisors(n: int) -> list[int]:
    """Divisors of ``n``, ascending."""
    return [d for d in range(1, n + 1) if n % d == 0]


def largest_divisor(n: int, at_most: int) -> int:
    """The largest divisor of ``n`` not above ``at_most`` (at least 1)."""
    return max(d for d in divisors(n) if d <= max(1, at_most))
