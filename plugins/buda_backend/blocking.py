"""Block structure of a netlist op: grid, then mblock x ublock per core.

A tensor of ``R x C`` tiles on a ``[gr, gc]`` grid gives each core ``R/gr x C/gc`` tiles,
split into ``mblock`` ublocks of ``ublock`` tiles. One op's tensors share the ublock row
count (so a fused op never reblocks between sub-ops); each width gets the widest ublock
column count that divides it, fits dest and the ``bound``, then the rows take what dest
has left, up to the bound. The bound is the program's tile of the op's result, in tiles:
a program tiled one 32x32 tile at a time computes 1x1-tile ublocks, a merged one larger.

>>> b = Blocking((2, 1), [(4, 3), (4, 1)], dest=4)
>>> b.dims((4, 3)), b.dims((4, 1))
(((2, 1), (1, 3)), ((2, 1), (1, 1)))
>>> Blocking((2, 1), [(4, 3)], dest=4, bound=(1, 1)).dims((4, 3))
((2, 3), (1, 1))
"""

from __future__ import annotations

from collections.abc import Sequence
from math import gcd

from .shapes import largest_divisor

Pair = tuple[int, int]


class Blocking:
    """mblock / ublock of every tensor of one op (sizes in tiles, whole tensors)."""

    def __init__(self, grid: Pair, shapes: Sequence[Pair], dest: int, bound: Pair | None = None) -> None:
        self.grid = grid
        self.dest = dest
        self.bound = bound or (dest, dest)
        rows = [r // grid[0] for r, _ in shapes]
        widths = {c // grid[1] for _, c in shapes}
        self.columns = {w: largest_divisor(w, min(dest, self.bound[1])) for w in widths}
        widest = max(self.columns.values(), default=1)
        common = 0
        for r in rows:
            common = gcd(common, r)
        self.rows = largest_divisor(max(common, 1), min(dest // widest, self.bound[0]))

    def ublock(self, shape: Pair) -> Pair:
        width = shape[1] // self.grid[1]
        fallback = largest_divisor(width, min(self.dest // self.rows, self.bound[1]))
        return (self.rows, self.columns.get(width) or fallback)

    def dims(self, shape: Pair) -> tuple[Pair, Pair]:
        """``(mblock, ublock)`` of a tensor of ``shape`` tiles."""
        ur, uc = self.ublock(shape)
        rows, cols = shape[0] // self.grid[0], shape[1] // self.grid[1]
        return ((rows // ur, cols // uc), (ur, uc))


def grid_for(shapes: Sequence[Pair], hint: Pair, limit: Pair, split_columns: bool = True) -> Pair:
    """The largest grid not above ``hint`` and ``limit`` that divides every tensor of ``shapes``
    (a single column when ``split_columns`` is False)."""
    rows = cols = 0
    for r, c in shapes:
        rows, cols = gcd(rows, r), gcd(cols, c)
    grid_rows = largest_divisor(max(rows, 1), min(hint[0], limit[0]))
    grid_cols = largest_divisor(max(cols, 1), min(hint[1], limit[1])) if split_columns else 1
    return (grid_rows, grid_cols)
