"""``nisa.bn_stats`` and ``nisa.bn_aggr`` against numpy: the even/odd statistics of a
chunk, their aggregation over the chunks of a row (float64 references), and the limits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nkigym_graph.nki_sim import NKISimulationError, simulate

HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"


def _kernel(body: str) -> str:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"{HEADER}@nki.jit\ndef kernel(x):\n{lines}\n"


def _stats_kernel(rows: int, cols: int) -> str:
    """The 6 statistics of one chunk ``x`` [rows, cols]."""
    return _kernel(f"""
t = nl.ndarray(({rows}, {cols}), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
s = nl.ndarray(({rows}, 6), dtype=nl.float32, buffer=nl.sbuf)
nisa.bn_stats(dst=s, data=t)
out = nl.ndarray(({rows}, 6), dtype=nl.float32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=s)
return out
""")


def _row_kernel(rows: int, cols: int, chunk: int) -> str:
    """Mean and variance of each row of ``x`` [rows, cols]: one bn_stats per ``chunk``
    columns into one tile, then bn_aggr."""
    chunks = -(-cols // chunk)
    return _kernel(f"""
t = nl.ndarray(({rows}, {cols}), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
s = nl.ndarray(({rows}, {6 * chunks}), dtype=nl.float32, buffer=nl.sbuf)
for i in range({chunks}):
    nisa.bn_stats(dst=s[:, 6 * i:6 * i + 6], data=t[:, {chunk} * i:min({chunk} * i + {chunk}, {cols})])
mv = nl.ndarray(({rows}, 2), dtype=nl.float32, buffer=nl.sbuf)
nisa.bn_aggr(dst=mv, data=s)
out = nl.ndarray(({rows}, 2), dtype=nl.float32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=mv)
return out
""")


def _half(values: np.ndarray) -> np.ndarray:
    count = values.shape[1]
    if count == 0:
        return np.zeros((values.shape[0], 3))
    mean = values.mean(axis=1)
    return np.stack([np.full(values.shape[0], count), mean, ((values - mean[:, None]) ** 2).sum(axis=1)], 1)


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 128), cols=st.integers(1, 512), seed=st.integers(0, 2**16))
def test_bn_stats_gives_even_then_odd_count_mean_and_scaled_variance(rows: int, cols: int, seed: int) -> None:
    x = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32) * 3 + 1
    got = simulate(_stats_kernel(rows, cols), x)
    wide = x.astype(np.float64)
    expected = np.concatenate([_half(wide[:, 0::2]), _half(wide[:, 1::2])], axis=1)
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-4)


def test_bn_stats_even_and_odd_halves_differ() -> None:
    x = np.tile(np.array([[1.0, 10.0, 3.0, 20.0, 5.0]], dtype=np.float32), (4, 1))
    got = simulate(_stats_kernel(4, 5), x)
    # even elements 1, 3, 5: count 3, mean 3, 8 = 4 + 0 + 4; odd 10, 20: count 2, mean 15, 50
    np.testing.assert_allclose(got[0], [3, 3, 8, 2, 15, 50], rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(1, 128),
    cols=st.integers(1, 1500),
    chunk=st.sampled_from([1, 2, 7, 100, 511, 512]),
    seed=st.integers(0, 2**16),
)
def test_bn_aggr_of_chunks_gives_the_row_mean_and_variance(
    rows: int, cols: int, chunk: int, seed: int
) -> None:
    chunk = max(min(chunk, cols), -(-cols // 64))  # at most 64 chunks
    x = (np.random.default_rng(seed).standard_normal((rows, cols)) * 2 + 0.5).astype(np.float32)
    got = simulate(_row_kernel(rows, cols, chunk), x)
    wide = x.astype(np.float64)
    np.testing.assert_allclose(got[:, 0], wide.mean(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[:, 1], wide.var(axis=1), rtol=1e-4, atol=1e-5)


def test_bn_aggr_casts_to_a_bfloat16_destination() -> None:
    body = """
t = nl.ndarray((8, 300), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
s = nl.ndarray((8, 6), dtype=nl.float32, buffer=nl.sbuf)
nisa.bn_stats(dst=s, data=t)
mv = nl.ndarray((8, 2), dtype=nl.bfloat16, buffer=nl.sbuf)
nisa.bn_aggr(dst=mv, data=s)
out = nl.ndarray((8, 2), dtype=nl.float32, buffer=nl.shared_hbm)
wide = nl.ndarray((8, 2), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_copy(dst=wide, src=mv)
nisa.dma_copy(dst=out, src=wide)
return out
"""
    x = np.random.default_rng(3).standard_normal((8, 300)).astype(np.float32)
    got = simulate(_kernel(body), x)
    np.testing.assert_allclose(got[:, 0], x.astype(np.float64).mean(axis=1), atol=1e-2)
    np.testing.assert_allclose(got[:, 1], x.astype(np.float64).var(axis=1), rtol=1e-2)


def test_bn_stats_over_512_elements_names_the_limit() -> None:
    with pytest.raises(NKISimulationError, match=r"\[bn_stats\.fmax\].*513 elements per partition > 512"):
        simulate(_stats_kernel(4, 513), np.ones((4, 513), dtype=np.float32))


def test_bn_aggr_needs_whole_triples() -> None:
    body = """
s = nl.ndarray((4, 7), dtype=nl.float32, buffer=nl.sbuf)
nisa.dma_copy(dst=s, src=x)
mv = nl.ndarray((4, 2), dtype=nl.float32, buffer=nl.sbuf)
nisa.bn_aggr(dst=mv, data=s)
out = nl.ndarray((4, 2), dtype=nl.float32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=mv)
return out
"""
    with pytest.raises(NKISimulationError, match=r"\[bn_aggr\.triples\].*7 elements per partition"):
        simulate(_kernel(body), np.ones((4, 7), dtype=np.float32))


def test_bn_stats_destination_holds_six_values() -> None:
    body = """
t = nl.ndarray((4, 10), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
s = nl.ndarray((4, 3), dtype=nl.float32, buffer=nl.sbuf)
nisa.bn_stats(dst=s, data=t)
out = nl.ndarray((4, 3), dtype=nl.float32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=s)
return out
"""
    with pytest.raises(NKISimulationError, match=r"\[dst\.shape\]"):
        simulate(_kernel(body), np.ones((4, 10), dtype=np.float32))
