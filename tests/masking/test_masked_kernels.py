"""Masked programs at random ragged shapes and masks: tile -> saturate -> emit NKI ->
simulate equals numpy (``nisa.affine_select`` with each tile's own offset)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nkigym_graph as nkigym


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # rows with nothing kept: nan
@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    k=st.integers(1, 130),
    rows=st.integers(1, 300),
    cols=st.integers(1, 700),
    offset=st.integers(-150, 150),
    channel_multiplier=st.integers(-2, 2),
    step=st.integers(-2, 2),
    cmp=st.sampled_from(["greater_equal", "greater", "less_equal", "less"]),
    seed=st.integers(0, 9),
)
def test_masked_matmul_and_exponential_kernel_equals_numpy(
    k: int, rows: int, cols: int, offset: int, channel_multiplier: int, step: int, cmp: str, seed: int
) -> None:
    mask = {"offset": offset, "channel_multiplier": channel_multiplier, "step": step, "cmp": cmp}

    def masked(a, b):
        scores = nkigym.affine_select(nkigym.nc_matmul(a, b), **mask)
        return nkigym.activation(scores, op="exp", scale=0.1)

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, rows)).astype(np.float32)
    b = rng.standard_normal((k, cols)).astype(np.float32)
    program = nkigym.saturate(nkigym.tile(masked, {"a": a.shape, "b": b.shape}))
    out = nkigym.nki_sim.simulate(nkigym.emit(program, backend="nki"), a, b)
    want = masked(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(out, want, rtol=2e-5, atol=1e-6)


def test_scheduled_causal_attention_kernel_equals_numpy() -> None:
    """A planned kernel evicts the scores from PSUM before the GpSimd Engine masks them."""
    import math

    def causal(q_t, k_t, v):
        scale = 1.0 / math.sqrt(q_t.shape[0])
        scores = nkigym.affine_select(nkigym.nc_matmul(q_t, k_t))
        shift = nkigym.tensor_scalar(nkigym.tensor_reduce(scores, op="max"), -scale, op="multiply")
        weights = nkigym.activation(scores, op="exp", scale=scale, bias=shift)
        total = nkigym.activation(nkigym.tensor_reduce(weights, op="sum"), op="reciprocal")
        return nkigym.tensor_scalar(nkigym.nc_matmul(nkigym.nc_transpose(weights), v), total)

    rng = np.random.default_rng(4)
    q_t, k_t, v = (
        rng.standard_normal((64, 384)),
        rng.standard_normal((64, 384)),
        rng.standard_normal((384, 64)),
    )
    shapes = {"q_t": q_t.shape, "k_t": k_t.shape, "v": v.shape}
    scheduled = nkigym.saturate(nkigym.tile(causal, shapes)).with_schedule("buffers=psum:4")
    kernel = nkigym.emit(scheduled, backend="nki")
    assert "nisa.affine_select" in kernel
    out = nkigym.nki_sim.simulate(kernel, *(x.astype(np.float32) for x in (q_t, k_t, v)))
    scores = np.where(np.tril(np.ones((384, 384), dtype=bool)), q_t.T @ k_t / 8.0, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, weights / weights.sum(axis=1, keepdims=True) @ v, rtol=1e-4, atol=1e-6)
