"""Shard shapes: the smallest whole-tile shard that covers the tensor on the given cores."""

from __future__ import annotations

import numpy as np
import pytest

from nkigym_graph.stitching import Grid, StitchError, shard_shape, stitch_weights


def _covering(length: int, tile: int, parts: int) -> int:
    """The smallest tile multiple ``s`` with ``parts * s >= length``, by counting up."""
    size = tile
    while parts * size < length:
        size += tile
    return size


@pytest.mark.parametrize(
    ("shape", "tile", "grid"),
    [
        ((8192, 14336), (1, 32), (8, 12)),
        ((8192, 14336), (1, 32), 96),
        ((64, 96), (32, 32), 2),
        ((64, 96), (32, 32), (3, 5)),  # more cores than width tiles
        ((7, 160), (1, 32), (1, 1)),
        ((96, 32), (32, 16), 4),
    ],
)
def test_width_sharding(shape: tuple[int, int], tile: tuple[int, int], grid: Grid) -> None:
    cores = grid if isinstance(grid, int) else grid[0] * grid[1]
    assert shard_shape(shape, tile, "width_sharded", grid) == (
        shape[0],
        _covering(shape[1], tile[1], cores),
    )


@pytest.mark.parametrize(
    ("shape", "tile", "grid"),
    [((8192, 14336), (1, 32), (8, 12)), ((96, 64), (32, 32), 2), ((96, 64), (32, 32), 7)],
)
def test_height_sharding(shape: tuple[int, int], tile: tuple[int, int], grid: Grid) -> None:
    cores = grid if isinstance(grid, int) else grid[0] * grid[1]
    assert shard_shape(shape, tile, "height_sharded", grid) == (
        _covering(shape[0], tile[0], cores),
        shape[1],
    )


@pytest.mark.parametrize(
    ("shape", "tile", "grid"),
    [
        ((8192, 14336), (1, 32), (8, 12)),
        ((96, 160), (32, 32), (2, 3)),
        ((32, 32), (32, 32), (4, 4)),
    ],
)
def test_block_sharding(shape: tuple[int, int], tile: tuple[int, int], grid: tuple[int, int]) -> None:
    assert shard_shape(shape, tile, "block_sharded", grid) == (
        _covering(shape[0], tile[0], grid[0]),
        _covering(shape[1], tile[1], grid[1]),
    )


def test_seed_width_shard_is_whole_tiles() -> None:
    # The seed prints (8192, 1195) = ceil(14336 / 12); 1195 columns is not whole tiles.
    shard = shard_shape((8192, 14336), (1, 32), "width_sharded", (8, 12))
    assert shard == (8192, 160)
    assert shard[1] % 32 == 0


def test_width_shards_cover_the_stitched_tensor() -> None:
    rng = np.random.default_rng(0)
    weights = {"a": rng.standard_normal((40, 96)), "b": rng.standard_normal((20, 224))}
    stitched, meta = stitch_weights(weights, tile=(32, 32), grid=(2, 2))
    assert meta.shard_shape == (64, 96)
    shards = [stitched[:, c : c + 96] for c in range(0, stitched.shape[1], 96)]
    assert len(shards) <= 4
    np.testing.assert_array_equal(np.concatenate(shards, axis=1), stitched)


def test_memory_layout_is_case_insensitive() -> None:
    _, meta = stitch_weights({"a": np.ones((2, 64))}, grid=2, memory_layout="WIDTH_SHARDED")
    assert meta.memory_layout == "width_sharded"
    assert meta.shard_shape == (2, 32)


def test_no_grid_no_shard_shape() -> None:
    _, meta = stitch_weights({"a": np.ones((2, 64))})
    assert meta.grid is None
    assert meta.shard_shape is None


def test_shape_not_in_tiles() -> None:
    with pytest.raises(StitchError, match=r"shape \(3, 64\) is not a multiple of the tile"):
        shard_shape((3, 64), (2, 32), "width_sharded", 2)
