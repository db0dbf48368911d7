"""Bad weights, tiles, grids and stitched arrays fail with a StitchError naming the problem."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nkigym_graph.errors import NkigymError
from nkigym_graph.stitching import (
    StitchError,
    StitchMetadata,
    WeightSlot,
    WeightSpec,
    stitch_weights,
    unstitch,
)


def _w(k: int, n: int, dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((k, n)).astype(dtype)


def test_stitch_error_is_an_nkigym_error() -> None:
    assert issubclass(StitchError, NkigymError)


@pytest.mark.parametrize("weights", [[], {}])
def test_empty_weights(weights: Any) -> None:
    with pytest.raises(StitchError, match="no weights to stitch: the weight list is empty"):
        stitch_weights(weights)


def test_width_not_a_tile_multiple_names_the_weight() -> None:
    weights = [("a", _w(4, 64)), ("b", _w(4, 40))]
    with pytest.raises(StitchError, match=r"weight 'b' width 40 is not a multiple of the tile width 32"):
        stitch_weights(weights)


def test_width_checked_against_a_custom_tile_width() -> None:
    with pytest.raises(StitchError, match="width 48 is not a multiple of the tile width 32"):
        stitch_weights({"a": _w(4, 48)}, tile=(32, 32))
    stitched, _ = stitch_weights({"a": _w(4, 48)}, tile=(32, 16))
    assert stitched.shape == (32, 48)


def test_mixed_dtypes_name_both() -> None:
    weights = {"a": _w(4, 32, np.float32), "b": _w(4, 32, np.float16)}
    with pytest.raises(
        StitchError,
        match=r"weights 'a' \(float32\) and 'b' \(float16\) have different dtypes; pass dtype=",
    ):
        stitch_weights(weights)


def test_dtype_casts_every_weight() -> None:
    a, b = _w(3, 32, np.float32, seed=1), _w(5, 32, np.float16, seed=2)
    stitched, meta = stitch_weights({"a": a, "b": b}, dtype=np.float16)
    assert stitched.dtype == np.float16
    assert meta.dtype == "float16"
    back = unstitch(stitched, meta)
    assert back["a"].tobytes() == a.astype(np.float16).tobytes()
    assert back["b"].tobytes() == b.tobytes()


def test_bad_dtype_argument() -> None:
    with pytest.raises(StitchError, match="dtype 'not-a-dtype' is not a numpy dtype"):
        stitch_weights({"a": _w(3, 32)}, dtype="not-a-dtype")


@pytest.mark.parametrize("shape", [(32,), (2, 3, 32), (0, 32), (4, 0)])
def test_not_a_2d_array(shape: tuple[int, ...]) -> None:
    with pytest.raises(StitchError, match=r"weight 'a' must be a non-empty 2-D \[K, N\] array"):
        stitch_weights({"a": np.zeros(shape, np.float32)})


def test_non_numeric_dtype() -> None:
    with pytest.raises(StitchError, match="weight 'a' has non-numeric dtype"):
        stitch_weights({"a": np.full((2, 32), "x")})


def test_duplicate_names() -> None:
    with pytest.raises(StitchError, match="duplicate weight name 'a'"):
        stitch_weights([("a", _w(2, 32)), ("a", _w(2, 32))])


@pytest.mark.parametrize("name", ["", 3, None])
def test_bad_names(name: Any) -> None:
    with pytest.raises(StitchError, match="weight names must be non-empty strings"):
        stitch_weights([(name, _w(2, 32))])


@pytest.mark.parametrize("item", [("a",), ("a", 1, 2, 3), "a", np.zeros((2, 32))])
def test_malformed_list_items(item: Any) -> None:
    with pytest.raises(StitchError, match=r"weights\[0\] must be \(name, array\)"):
        stitch_weights([item])


@pytest.mark.parametrize("weights", [np.zeros((2, 32)), "weights", 5])
def test_weights_not_a_list_or_dict(weights: Any) -> None:
    with pytest.raises(StitchError, match="weights must be a list of"):
        stitch_weights(weights)


@pytest.mark.parametrize("tile", [(0, 32), (1,), (1, 32, 1), (1.0, 32), (True, 32), "1x32"])
def test_bad_tile(tile: Any) -> None:
    with pytest.raises(StitchError, match="tile must be"):
        stitch_weights({"a": _w(2, 32)}, tile=tile)


@pytest.mark.parametrize("grid", [0, -4, (0, 2), (2,), (2, 2, 2), 2.0, "8x8", True])
def test_bad_grid(grid: Any) -> None:
    with pytest.raises(StitchError, match="grid must be"):
        stitch_weights({"a": _w(2, 32)}, grid=grid)


def test_bad_weight_grid_names_the_weight() -> None:
    with pytest.raises(StitchError, match="grid of 'a' must be"):
        stitch_weights([("a", _w(2, 32), (0, 1))])


def test_weight_grid_larger_than_union() -> None:
    with pytest.raises(StitchError, match=r"grid of 'a' has 64 cores, more than the 48"):
        stitch_weights([WeightSpec("a", _w(2, 32), (8, 8))], grid=(8, 6))


def test_unknown_memory_layout() -> None:
    with pytest.raises(StitchError, match="memory_layout must be one of width_sharded"):
        stitch_weights({"a": _w(2, 32)}, memory_layout="interleaved")


def test_block_sharding_needs_rows_and_cols() -> None:
    with pytest.raises(StitchError, match=r"block_sharded needs a \(rows, cols\) grid"):
        stitch_weights({"a": _w(2, 32)}, grid=4, memory_layout="block_sharded")


def test_unstitch_shape_mismatch() -> None:
    stitched, meta = stitch_weights({"a": _w(2, 32), "b": _w(3, 64)})
    with pytest.raises(
        StitchError, match=r"stitched array has shape \(3, 64\), the metadata's unified_shape"
    ):
        unstitch(stitched[:, :64], meta)
    with pytest.raises(StitchError, match=r"has shape \(288,\)"):
        unstitch(stitched.ravel(), meta)


def test_unstitch_needs_metadata() -> None:
    stitched, meta = stitch_weights({"a": _w(2, 32)})
    with pytest.raises(StitchError, match="metadata must be a StitchMetadata, got dict"):
        unstitch(stitched, meta.to_dict())  # type: ignore[arg-type]


def _slot(name: str, col_start: int, n: int, height: int = 4, k: int = 4) -> WeightSlot:
    return WeightSlot(name, col_start, col_start + n, col_start // 32, n // 32, (k, n), (height, n))


def _meta(slots: list[WeightSlot], width: int) -> StitchMetadata:
    return StitchMetadata(
        weights={s.name: s for s in slots},
        unified_shape=(4, width),
        total_width_tiles=width // 32,
        total_height_tiles=4,
        tile=(1, 32),
        memory_layout="width_sharded",
        grid=None,
        shard_shape=None,
        dtype="float32",
    )


def test_metadata_accepts_contiguous_slots() -> None:
    meta = _meta([_slot("a", 0, 32), _slot("b", 32, 64)], 96)
    assert meta.weights["b"].col_end == 96
    assert hash(meta) == hash(_meta([_slot("a", 0, 32), _slot("b", 32, 64)], 96))


@pytest.mark.parametrize(
    ("slots", "width", "message"),
    [
        ([_slot("a", 0, 32), _slot("b", 0, 64)], 96, "does not fit at column 32"),  # overlap
        ([_slot("a", 0, 32), _slot("b", 64, 32)], 96, "does not fit at column 32"),  # gap
        ([_slot("a", 0, 32, k=5)], 32, "does not fit at column 0"),  # taller than the tensor
        ([_slot("a", 0, 32, height=8)], 32, "does not fit at column 0"),  # padded height
        ([_slot("a", 0, 32)], 64, "weight slots cover 32 columns, unified width is 64"),
        ([], 0, "metadata has no weights"),
    ],
)
def test_metadata_rejects_bad_slots(slots: list[WeightSlot], width: int, message: str) -> None:
    with pytest.raises(StitchError, match=message):
        _meta(slots, width)


def test_metadata_rejects_shape_not_in_tiles() -> None:
    with pytest.raises(StitchError, match=r"unified_shape \(4, 32\) is not 4 x 2 tiles"):
        StitchMetadata(
            weights={"a": _slot("a", 0, 32)},
            unified_shape=(4, 32),
            total_width_tiles=2,
            total_height_tiles=4,
            tile=(1, 32),
            memory_layout="width_sharded",
            grid=None,
            shard_shape=None,
            dtype="float32",
        )


def test_a_ragged_weight_is_a_stitch_error_naming_it() -> None:
    with pytest.raises(StitchError, match="weight 'a' is not an array"):
        stitch_weights({"a": [[1.0, 2.0], [3.0]]})


@pytest.mark.parametrize("dtype", [object, "U8", "datetime64[s]"])
def test_a_non_numeric_dtype_to_cast_to_is_refused(dtype: Any) -> None:
    with pytest.raises(StitchError, match="is not a numeric dtype"):
        stitch_weights({"a": _w(4, 32)}, dtype=dtype)
