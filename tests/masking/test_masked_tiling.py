"""Tiling with ``affine_select``: ragged shapes interpret to numpy (two-pass and online),
tiles masked whole are skipped (no score matmul, exponential or ``P @ V`` product),
tiles kept whole get no mask statement, and what needs a masked tile's elements gets them."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nkigym_graph as nkigym


def causal_attention(offset: int):
    def attention(q_t, k_t, v):
        scale = 1.0 / math.sqrt(q_t.shape[0])
        scores = nkigym.affine_select(nkigym.nc_matmul(q_t, k_t), offset=offset)
        shift = nkigym.tensor_scalar(nkigym.tensor_reduce(scores, op="max"), -scale, op="multiply")
        weights = nkigym.activation(scores, op="exp", scale=scale, bias=shift)
        total = nkigym.activation(nkigym.tensor_reduce(weights, op="sum"), op="reciprocal")
        return nkigym.tensor_scalar(nkigym.nc_matmul(nkigym.nc_transpose(weights), v), total)

    return attention


def reference(q_t: np.ndarray, k_t: np.ndarray, v: np.ndarray, offset: int) -> np.ndarray:
    scores = q_t.T @ k_t / math.sqrt(q_t.shape[0])
    scores = np.where(np.tril(np.ones(scores.shape, dtype=bool), k=offset), scores, -np.inf)
    with np.errstate(invalid="ignore"):  # a row with no key kept is nan, in numpy too
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        return weights / weights.sum(axis=1, keepdims=True) @ v


def _inputs(d: int, queries: int, keys: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "q_t": rng.standard_normal((d, queries)),
        "k_t": rng.standard_normal((d, keys)),
        "v": rng.standard_normal((keys, d)),
    }


def _shapes(arrays: dict[str, np.ndarray]) -> dict[str, tuple[int, ...]]:
    return {name: array.shape for name, array in arrays.items()}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # rows with no key kept: nan (0 / 0)
@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    d=st.integers(1, 130),
    queries=st.integers(1, 700),
    keys=st.integers(1, 700),
    offset=st.integers(-200, 300),
    online=st.booleans(),
    seed=st.integers(0, 9),
)
def test_causal_attention_tiles_to_numpy(
    d: int, queries: int, keys: int, offset: int, online: bool, seed: int
) -> None:
    arrays = _inputs(d, queries, keys, seed)
    program = nkigym.tile(causal_attention(offset), _shapes(arrays), dtype="float64", online=online)
    got = nkigym.interpret(program, **arrays)
    np.testing.assert_allclose(got, reference(**arrays, offset=offset), rtol=1e-9, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("online", [False, True])
def test_tiles_above_the_diagonal_are_skipped(online: bool) -> None:
    """Seq 1024 in 128-tiles: 8 x 8 tiles, 36 at or below the diagonal, 8 on it."""
    arrays = _inputs(64, 1024, 1024, 0)
    program = nkigym.tile(causal_attention(0), _shapes(arrays), online=online)
    ops = Counter(stmt.op.name for stmt in program.statements)
    lower = 8 * 9 // 2
    assert ops["affine_select"] == 8  # only the diagonal tiles are masked
    assert ops["nc_matmul"] == 2 * lower  # Q K^T and P V, no tile above the diagonal
    assert ops["nc_transpose"] == lower
    # an exponential per kept tile; online, a rescale where a row's second 512-key step
    # has a kept tile (the last four row blocks)
    assert ops["activation_bias"] == lower + (4 if online else 0)
    got = nkigym.interpret(program, **arrays)
    np.testing.assert_allclose(got, reference(**arrays, offset=0), rtol=1e-5)
    full = nkigym.tile(causal_attention(10_000), _shapes(arrays), online=online)  # keeps every key
    assert Counter(s.op.name for s in full.statements)["nc_matmul"] == 2 * 64
    assert "affine_select" not in Counter(s.op.name for s in full.statements)


def test_two_pass_exponentials_are_one_per_kept_tile() -> None:
    arrays = _inputs(64, 512, 512, 1)
    program = nkigym.tile(causal_attention(0), _shapes(arrays))
    ops = Counter(stmt.op.name for stmt in program.statements)
    assert ops["activation_bias"] == 4 * 5 // 2


def test_a_masked_tile_a_store_needs_is_computed() -> None:
    """The mask's result stored as it is: every tile is computed, the fill included."""

    def masked(a, b):
        return nkigym.affine_select(nkigym.nc_matmul(a, b), offset=-130, fill=-7.0)

    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((64, 300)), rng.standard_normal((64, 260))
    program = nkigym.tile(masked, {"a": a.shape, "b": b.shape})
    want = np.where(np.tril(np.ones((300, 260), dtype=bool), k=-130), a.T @ b, -7.0)
    np.testing.assert_allclose(nkigym.interpret(program, a=a, b=b), want, rtol=1e-5)
    np.testing.assert_allclose(nkigym.interpret(nkigym.saturate(program), a=a, b=b), want, rtol=1e-5)


def test_a_finite_fill_is_not_skipped_through_the_exponential() -> None:
    """exp(fill * s - m) is not known to be 0 for a finite fill: the work is done."""
    arrays = _inputs(32, 384, 384, 3)

    def attention(q_t, k_t, v):
        scores = nkigym.affine_select(nkigym.nc_matmul(q_t, k_t), fill=-30.0)
        shift = nkigym.tensor_scalar(nkigym.tensor_reduce(scores, op="max"), -1.0, op="multiply")
        weights = nkigym.activation(scores, op="exp", bias=shift)
        return nkigym.nc_matmul(nkigym.nc_transpose(weights), v)

    program = nkigym.tile(attention, _shapes(arrays))
    scores = arrays["q_t"].T @ arrays["k_t"]
    scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -30.0)
    want = np.exp(scores - scores.max(axis=1, keepdims=True)) @ arrays["v"]
    np.testing.assert_allclose(nkigym.interpret(program, **arrays), want, rtol=1e-5)
    assert Counter(s.op.name for s in program.statements)["nc_matmul"] > 2 * 6


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    queries=st.integers(1, 400),
    keys=st.integers(1, 400),
    offset=st.integers(-100, 100),
    seed=st.integers(0, 9),
)
def test_saturated_causal_attention_equals_numpy(queries: int, keys: int, offset: int, seed: int) -> None:
    arrays = _inputs(16, queries, keys, seed)
    program = nkigym.saturate(nkigym.tile(causal_attention(offset), _shapes(arrays), dtype="float64"))
    got = nkigym.interpret(program, **arrays)
    np.testing.assert_allclose(got, reference(**arrays, offset=offset), rtol=1e-9, atol=1e-12, equal_nan=True)


COMPARE = {
    "greater_equal": np.greater_equal,
    "greater": np.greater,
    "less_equal": np.less_equal,
    "less": np.less,
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    queries=st.integers(1, 600),
    keys=st.integers(1, 1100),
    offset=st.integers(-400, 400),
    channel_multiplier=st.integers(-2, 2),
    step=st.integers(-2, 2),
    cmp=st.sampled_from(sorted(COMPARE)),
    online=st.booleans(),
    seed=st.integers(0, 9),
)
def test_any_affine_mask_tiles_to_numpy(
    queries: int,
    keys: int,
    offset: int,
    channel_multiplier: int,
    step: int,
    cmp: str,
    online: bool,
    seed: int,
) -> None:
    """Masks of every direction (anti-causal, bands of rows or columns, none or all
    kept), two-pass and online: masked chunks may come first, last or in between."""
    mask = {"offset": offset, "channel_multiplier": channel_multiplier, "step": step, "cmp": cmp}

    def attention(q_t, k_t, v):
        scores = nkigym.affine_select(nkigym.nc_matmul(q_t, k_t), **mask)
        shift = nkigym.tensor_scalar(nkigym.tensor_reduce(scores, op="max"), -0.25, op="multiply")
        weights = nkigym.activation(scores, op="exp", scale=0.25, bias=shift)
        total = nkigym.activation(nkigym.tensor_reduce(weights, op="sum"), op="reciprocal")
        return nkigym.tensor_scalar(nkigym.nc_matmul(nkigym.nc_transpose(weights), v), total)

    arrays = _inputs(8, queries, keys, seed)
    program = nkigym.tile(attention, _shapes(arrays), dtype="float64", online=online)
    rows, cols = np.arange(queries)[:, None], np.arange(keys)[None, :]
    keep = COMPARE[cmp](offset + channel_multiplier * rows + step * cols, 0)
    scores = np.where(keep, arrays["q_t"].T @ arrays["k_t"] * 0.25, -np.inf)
    with np.errstate(invalid="ignore"):
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        want = weights / weights.sum(axis=1, keepdims=True) @ arrays["v"]
    got = nkigym.interpret(program, **arrays)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True)
