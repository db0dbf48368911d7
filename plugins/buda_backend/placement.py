"""Placing graph ops on the worker grid: rows of ops side by side ("shelves").

Ops are taken tallest first and laid left to right; a shelf as tall as its tallest op
starts below when a row is full. Ops of one graph never share a core. ``place`` returns
None when the ops do not fit; the caller then shrinks the grid of the largest op.
"""

from __future__ import annotations

from collections.abc import Sequence

Pair = tuple[int, int]


def place(grids: Sequence[tuple[str, Pair]], worker: Pair) -> dict[str, Pair] | None:
    """``grid_loc`` of every ``(name, grid_size)``, or None if they do not fit in ``worker``."""
    rows, cols = worker
    locations: dict[str, Pair] = {}
    top = column = height = 0
    for name, (r, c) in sorted(grids, key=lambda item: -item[1][0]):
        if column + c > cols:
            top, column, height = top + height, 0, 0
        if top + r > rows or c > cols:
            return None
        locations[name] = (top, column)
        column += c
        height = max(height, r)
    return locations


def shrink(grid: Pair) -> Pair:
    """A grid limit half as large along its longer side."""
    rows, cols = grid
    return (max(1, rows // 2), cols) if rows >= cols else (rows, max(1, cols // 2))
