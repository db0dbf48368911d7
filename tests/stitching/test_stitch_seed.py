"""Seed 003's test case: three matmul weights stitched into one [8192, 14336] tensor."""

from __future__ import annotations

import numpy as np
import pytest

from nkigym_graph.stitching import (
    StitchMetadata,
    WeightSpec,
    compile_time_args,
    stitch_weights,
    unstitch,
)

# (name, [K, N], (rows, cols) of cores): 48, 96 and 64 cores, as in the seed.
SEED_WEIGHTS = [
    ("matmul1", (7168, 1536), (8, 6)),
    ("matmul2", (1536, 12288), (8, 12)),
    ("matmul3", (8192, 512), (8, 8)),
]
UNION_GRID = (8, 12)

EXPECTED_SLOTS = {
    # name: (col_start, col_end, col_start_tiles, width_tiles)
    "matmul1": (0, 1536, 0, 48),
    "matmul2": (1536, 13824, 48, 384),
    "matmul3": (13824, 14336, 432, 16),
}


@pytest.fixture(scope="module")
def seed_f32() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {name: rng.standard_normal(shape, dtype=np.float32) for name, shape, _ in SEED_WEIGHTS}


@pytest.fixture(scope="module")
def stitched_seed(
    seed_f32: dict[str, np.ndarray],
) -> tuple[np.ndarray, StitchMetadata]:
    specs = [WeightSpec(name, seed_f32[name], grid) for name, _, grid in SEED_WEIGHTS]
    return stitch_weights(specs, tile=(1, 32), grid=UNION_GRID)


def test_seed_stitched_shape(stitched_seed: tuple[np.ndarray, StitchMetadata]) -> None:
    stitched, meta = stitched_seed
    assert stitched.shape == (8192, 14336)
    assert stitched.dtype == np.float32
    assert meta.unified_shape == (8192, 14336)
    assert meta.total_width_tiles == 448
    assert meta.total_height_tiles == 8192
    assert meta.tile == (1, 32)
    assert meta.memory_layout == "width_sharded"
    assert meta.grid == UNION_GRID
    assert meta.dtype == "float32"


def test_seed_metadata_per_weight(stitched_seed: tuple[np.ndarray, StitchMetadata]) -> None:
    _, meta = stitched_seed
    assert list(meta.weights) == ["matmul1", "matmul2", "matmul3"]
    for name, shape, grid in SEED_WEIGHTS:
        slot = meta.weights[name]
        col_start, col_end, col_start_tiles, width_tiles = EXPECTED_SLOTS[name]
        assert slot.name == name
        assert slot.col_start == col_start
        assert slot.col_end == col_end
        assert slot.col_start_tiles == col_start_tiles
        assert slot.width_tiles == width_tiles
        assert slot.original_shape == shape
        assert slot.padded_shape == (8192, shape[1])
        assert slot.grid == grid


def test_seed_shard_shape(stitched_seed: tuple[np.ndarray, StitchMetadata]) -> None:
    # 448 width tiles over 96 cores -> 5 tiles (160 columns) per core; the seed's
    # (8192, 1195) = ceil(14336 / 12) elements is not a whole number of tiles.
    _, meta = stitched_seed
    assert meta.shard_shape == (8192, 160)


def test_seed_to_dict_layout(stitched_seed: tuple[np.ndarray, StitchMetadata]) -> None:
    _, meta = stitched_seed
    as_dict = meta.to_dict()
    assert as_dict["unified_shape"] == (8192, 14336)
    assert as_dict["total_width_tiles"] == 448
    assert as_dict["shard_shape"] == (8192, 160)
    assert as_dict["weights"]["matmul1"] == {
        "col_start": 0,
        "col_end": 1536,
        "col_start_tiles": 0,
        "width_tiles": 48,
        "original_shape": (7168, 1536),
        "padded_shape": (8192, 1536),
        "grid": (8, 6),
    }


def test_seed_unstitch_float32_bit_identical(
    stitched_seed: tuple[np.ndarray, StitchMetadata], seed_f32: dict[str, np.ndarray]
) -> None:
    stitched, meta = stitched_seed
    back = unstitch(stitched, meta)
    assert list(back) == list(seed_f32)
    for name, weight in seed_f32.items():
        assert back[name].dtype == weight.dtype
        assert back[name].shape == weight.shape
        assert back[name].tobytes() == weight.tobytes()


def test_seed_padding_rows_are_zero(
    stitched_seed: tuple[np.ndarray, StitchMetadata], seed_f32: dict[str, np.ndarray]
) -> None:
    stitched, meta = stitched_seed
    for name, weight in seed_f32.items():
        slot = meta.weights[name]
        k = weight.shape[0]
        np.testing.assert_array_equal(stitched[:k, slot.col_start : slot.col_end], weight)
        assert not stitched[k:, slot.col_start : slot.col_end].any()


def test_seed_unstitch_bfloat16_bit_identical(seed_f32: dict[str, np.ndarray]) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    weights = {name: w.astype(ml_dtypes.bfloat16) for name, w in seed_f32.items()}
    stitched, meta = stitch_weights(weights)
    assert stitched.shape == (8192, 14336)
    assert stitched.dtype == ml_dtypes.bfloat16
    assert meta.dtype == "bfloat16"
    back = unstitch(stitched, meta)
    for name, weight in weights.items():
        assert back[name].dtype == weight.dtype
        assert back[name].tobytes() == weight.tobytes()


def test_seed_compile_time_args(stitched_seed: tuple[np.ndarray, StitchMetadata]) -> None:
    _, meta = stitched_seed
    assert compile_time_args(meta, cb_id=3) == [
        ("stitched_weights_cb", 3),
        ("matmul1_col_start_tiles", 0),
        ("matmul1_width_tiles", 48),
        ("matmul2_col_start_tiles", 48),
        ("matmul2_width_tiles", 384),
        ("matmul3_col_start_tiles", 432),
        ("matmul3_width_tiles", 16),
    ]
