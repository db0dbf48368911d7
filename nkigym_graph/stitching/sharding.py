"""Core grids and the shard shape of a stitched tensor.

A core grid is ``(rows, cols)`` of Tensix cores or a plain number of cores. Every
split is in whole tiles, because a tile-layout tensor can only be sharded with
shard shapes that are tile multiples; the last core(s) may get a short shard or
none at all (the shard shape is the largest one, as tt-metal's shard spec states it).

For a stitched tensor of ``H x W`` elements, ``Ht = H / tile_h`` and
``Wt = W / tile_w`` tiles, on a grid of ``cores = rows * cols`` cores:

- ``width_sharded``: ``(H, ceil(Wt / cores) * tile_w)``; any grid.
- ``height_sharded``: ``(ceil(Ht / cores) * tile_h, W)``; any grid.
- ``block_sharded``: ``(ceil(Ht / rows) * tile_h, ceil(Wt / cols) * tile_w)``; needs
  ``(rows, cols)``.

The seed's example, 14336 columns on the 12 x 8 = 96-core union grid, gives
``ceil(448 / 96) = 5`` tiles, a shard of ``(8192, 160)``. The seed prints
``(8192, 1195)``, which is ``ceil(14336 / 12)`` elements: it splits elements over the
12 grid columns only, and 1195 is not a multiple of 32, so it cannot be a tile shard.

>>> shard_shape((8192, 14336), (1, 32), "width_sharded", (8, 12))
(8192, 160)
"""

from __future__ import annotations

from nkigym_graph.stitching.errors import StitchError

Grid = int | tuple[int, int]
"""``(rows, cols)`` of cores, or a number of cores."""

MEMORY_LAYOUTS = ("width_sharded", "height_sharded", "block_sharded")


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def check_grid(grid: object, what: str = "grid") -> Grid:
    """Return ``grid`` as a positive int or a ``(rows, cols)`` tuple of positive ints."""
    if isinstance(grid, int) and _positive_int(grid):
        return grid
    if isinstance(grid, tuple | list) and len(grid) == 2 and all(map(_positive_int, grid)):
        return (grid[0], grid[1])
    raise StitchError(
        f"{what} must be (rows, cols) of positive ints or a positive number of cores, got {grid!r}"
    )


def num_cores(grid: Grid) -> int:
    """The number of cores in ``grid``."""
    return grid if isinstance(grid, int) else grid[0] * grid[1]


def check_memory_layout(memory_layout: str) -> str:
    """Return ``memory_layout`` in lower case if it is one of :data:`MEMORY_LAYOUTS`."""
    layout = memory_layout.lower() if isinstance(memory_layout, str) else memory_layout
    if layout not in MEMORY_LAYOUTS:
        raise StitchError(f"memory_layout must be one of {', '.join(MEMORY_LAYOUTS)}, got {memory_layout!r}")
    return layout


def _tiles_per_part(tiles: int, parts: int) -> int:
    return -(-tiles // parts)


def shard_shape(
    shape: tuple[int, int], tile: tuple[int, int], memory_layout: str, grid: Grid
) -> tuple[int, int]:
    """The per-core shard shape of a ``shape`` tensor (a tile multiple) by the module's rule."""
    height, width = shape
    tile_h, tile_w = tile
    if height % tile_h or width % tile_w:
        raise StitchError(f"shape {shape} is not a multiple of the tile {tile}")
    layout = check_memory_layout(memory_layout)
    grid = check_grid(grid)
    cores = num_cores(grid)
    if layout == "width_sharded":
        return (height, _tiles_per_part(width // tile_w, cores) * tile_w)
    if layout == "height_sharded":
        return (_tiles_per_part(height // tile_h, cores) * tile_h, width)
    if isinstance(grid, int):
        raise StitchError(f"block_sharded needs a (rows, cols) grid, got {grid} cores")
    rows, cols = grid
    return (
        _tiles_per_part(height // tile_h, rows) * tile_h,
        _tiles_per_part(width // tile_w, cols) * tile_w,
    )
