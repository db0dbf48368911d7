"""Compile-time args: the CB id, then each weight's first tile column and width in tiles."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nkigym_graph.ir.targets import BLACKHOLE, TRN2, WORMHOLE_B0
from nkigym_graph.stitching import StitchError, compile_time_args, stitch_weights


def _meta(names: list[str], widths: list[int]) -> Any:
    weights = [(name, np.ones((2, w), np.float32)) for name, w in zip(names, widths, strict=True)]
    return stitch_weights(weights)[1]


def test_args_in_weight_order_without_cb() -> None:
    meta = _meta(["wq", "wk", "wv"], [64, 32, 96])
    assert compile_time_args(meta) == [
        ("wq_col_start_tiles", 0),
        ("wq_width_tiles", 2),
        ("wk_col_start_tiles", 2),
        ("wk_width_tiles", 1),
        ("wv_col_start_tiles", 3),
        ("wv_width_tiles", 3),
    ]


def test_args_locate_each_weight() -> None:
    rng = np.random.default_rng(5)
    weights = {"a": rng.standard_normal((3, 64)), "b": rng.standard_normal((6, 160))}
    stitched, meta = stitch_weights(weights, tile=(1, 32))
    args = dict(compile_time_args(meta, cb_id=0))
    for name, weight in weights.items():
        start, width = args[f"{name}_col_start_tiles"], args[f"{name}_width_tiles"]
        cols = stitched[: weight.shape[0], start * 32 : (start + width) * 32]
        np.testing.assert_array_equal(cols, weight)


def test_cb_id_limits_per_target() -> None:
    meta = _meta(["a"], [32])
    assert compile_time_args(meta, cb_id=40, target=BLACKHOLE)[0] == ("stitched_weights_cb", 40)
    assert compile_time_args(meta, cb_id=63)[0] == ("stitched_weights_cb", 63)
    with pytest.raises(StitchError, match=r"cb_id must be an int in \[0, 32\) on wormhole_b0"):
        compile_time_args(meta, cb_id=40, target=WORMHOLE_B0)
    with pytest.raises(StitchError, match="target trn2 has no circular buffers"):
        compile_time_args(meta, cb_id=0, target=TRN2)


@pytest.mark.parametrize("cb_id", [-1, 64, 2.0, True])
def test_bad_cb_id(cb_id: Any) -> None:
    with pytest.raises(StitchError, match=r"cb_id must be an int in \[0, 64\)"):
        compile_time_args(_meta(["a"], [32]), cb_id=cb_id)


@pytest.mark.parametrize("name", ["matmul-1", "1st", "q k"])
def test_names_must_be_c_identifiers(name: str) -> None:
    with pytest.raises(StitchError, match="is not a C identifier"):
        compile_time_args(_meta([name], [32]))
