"""Large tiled matmuls simulate correctly (timings live in benchmarks/, not here)."""

from __future__ import annotations

import numpy as np
import pytest

from nkigym_graph.nki_sim import simulate

TILED = """import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_tiled(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    TM = nl.tile_size.gemm_stationary_fmax
    TK = nl.tile_size.pmax
    TN = nl.tile_size.gemm_moving_fmax
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                a = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
                nisa.dma_copy(dst=b, src=rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                nisa.nc_matmul(dst=acc, stationary=a, moving=b)
            res = nl.ndarray((TM, TN), dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=result[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], src=res)
    return result
"""


def _check(size: int) -> None:
    rng = np.random.default_rng(size)
    lhsT = rng.standard_normal((size, size), dtype=np.float32)
    rhs = rng.standard_normal((size, size), dtype=np.float32)
    out, report = simulate(TILED, lhsT, rhs, report=True)
    np.testing.assert_allclose(out, lhsT.T @ rhs, rtol=1e-4, atol=1e-3 * np.sqrt(size))
    assert report.instruction_counts["nisa.nc_matmul"] == (size // 128) ** 2 * (size // 512)


def test_1024_cubed() -> None:
    _check(1024)


@pytest.mark.slow
def test_2048_cubed() -> None:
    """16 x 4 x 16 tiles of [128, 128] @ [128, 512]: well under a few seconds."""
    _check(2048)
