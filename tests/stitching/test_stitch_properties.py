"""Property: any list of weights stitches into contiguous columns and unstitches exactly."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nkigym_graph.stitching import compile_time_args, stitch_weights, unstitch

DTYPES = [np.float32, np.float16, np.int32]


@st.composite
def weight_lists(draw: st.DrawFn) -> tuple[list[tuple[str, np.ndarray]], tuple[int, int]]:
    tile = (draw(st.sampled_from([1, 32])), draw(st.sampled_from([16, 32])))
    dtype = draw(st.sampled_from(DTYPES))
    shapes = draw(
        st.lists(
            st.tuples(st.integers(1, 70), st.integers(1, 4).map(lambda t: t * tile[1])),
            min_size=1,
            max_size=5,
        )
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    weights = [(f"w{i}", (rng.standard_normal(shape) * 100).astype(dtype)) for i, shape in enumerate(shapes)]
    return weights, tile


@settings(max_examples=60, deadline=None)
@given(weight_lists())
def test_stitch_unstitch_roundtrip(
    case: tuple[list[tuple[str, np.ndarray]], tuple[int, int]],
) -> None:
    weights, (tile_h, tile_w) = case
    stitched, meta = stitch_weights(weights, tile=(tile_h, tile_w))

    max_k = max(w.shape[0] for _, w in weights)
    height = stitched.shape[0]
    assert height % tile_h == 0 and max_k <= height < max_k + tile_h
    assert stitched.shape == (height, sum(w.shape[1] for _, w in weights))
    assert meta.unified_shape == stitched.shape
    assert meta.total_width_tiles * tile_w == stitched.shape[1]

    # Columns are contiguous, in order, non-overlapping and cover the whole width.
    col = 0
    for name, weight in weights:
        slot = meta.weights[name]
        assert (slot.col_start, slot.col_end) == (col, col + weight.shape[1])
        assert slot.col_start_tiles * tile_w == slot.col_start
        assert slot.width_tiles * tile_w == weight.shape[1]
        assert slot.padded_shape == (height, weight.shape[1])
        # The weight sits at the top of its columns; padding rows below are zero.
        block = stitched[:, slot.col_start : slot.col_end]
        np.testing.assert_array_equal(block[: weight.shape[0]], weight)
        assert not block[weight.shape[0] :].any()
        col = slot.col_end
    assert col == stitched.shape[1]

    back = unstitch(stitched, meta)
    assert list(back) == [name for name, _ in weights]
    for name, weight in weights:
        assert back[name].dtype == weight.dtype
        assert back[name].shape == weight.shape
        assert back[name].tobytes() == weight.tobytes()

    args = dict(compile_time_args(meta))
    for name, _ in weights:
        assert args[f"{name}_col_start_tiles"] == meta.weights[name].col_start_tiles
