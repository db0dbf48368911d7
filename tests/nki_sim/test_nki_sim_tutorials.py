"""Kernels in the style of the public NKI tutorials run unmodified and match numpy.

Each kernel is NKI 0.6/0.7 source text (``dst=`` first, ``nisa.*`` instructions,
``nl.ndarray`` buffers), as a user would write it for the real compiler.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from nkigym_graph.nki_sim import simulate

HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"
BF16 = np.dtype(ml_dtypes.bfloat16)

MATMUL_BASIC = (
    HEADER
    + """
@nki.jit
def matmul_basic(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    lhs_tile = nl.ndarray(lhsT.shape, dtype=lhsT.dtype, buffer=nl.sbuf)
    rhs_tile = nl.ndarray(rhs.shape, dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=lhs_tile, src=lhsT)
    nisa.dma_copy(dst=rhs_tile, src=rhs)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc, lhs_tile, rhs_tile)
    out_tile = nl.ndarray((M, N), dtype=result.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=out_tile, src=acc)
    nisa.dma_copy(dst=result, src=out_tile)
    return result
"""
)

MATMUL_TILED = (
    HEADER
    + """
@nki.jit
def matmul_tiled(lhsT, rhs):
    K, M = lhsT.shape
    K2, N = rhs.shape
    assert K == K2, "contraction dims differ"
    TM = nl.tile_size.gemm_stationary_fmax
    TK = nl.tile_size.pmax
    TN = nl.tile_size.gemm_moving_fmax
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                a_tile = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                b_tile = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a_tile, src=lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
                nisa.dma_copy(dst=b_tile, src=rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                nisa.nc_matmul(dst=acc, stationary=a_tile, moving=b_tile)
            out_tile = nl.ndarray((TM, TN), dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=out_tile, src=acc)
            nisa.dma_copy(dst=result[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], src=out_tile)
    return result
"""
)

MATMUL_HOISTED = (
    HEADER
    + """
@nki.jit
def matmul_hoisted(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    TM, TK, TN = 128, 128, 512
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in range(M // TM):
        a_tiles = []
        for k in range(K // TK):
            a_tile = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a_tile, src=lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
            a_tiles.append(a_tile)
        for n in range(N // TN):
            b_tiles = []
            for k in range(K // TK):
                b_tile = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_tile, src=rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                b_tiles.append(b_tile)
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in range(K // TK):
                nisa.nc_matmul(dst=acc, stationary=a_tiles[k], moving=b_tiles[k])
            out_tile = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=out_tile, src=acc)
            nisa.dma_copy(dst=result[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], src=out_tile)
    return result
"""
)

MATMUL_BLOCKED = (
    HEADER
    + """
@nki.jit
def matmul_blocked(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    TM, TK, TN = 128, 128, 512
    BM, BN = 2, 2
    assert M % (TM * BM) == 0 and N % (TN * BN) == 0
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // (TM * BM)):
        a_block = []
        for bm in nl.affine_range(BM):
            column = []
            for k in nl.affine_range(K // TK):
                tile = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                m0 = (m * BM + bm) * TM
                nisa.dma_copy(dst=tile, src=lhsT[k * TK:(k + 1) * TK, m0:m0 + TM])
                column.append(tile)
            a_block.append(column)
        for n in nl.affine_range(N // (TN * BN)):
            b_block = []
            for bn in nl.affine_range(BN):
                column = []
                for k in nl.affine_range(K // TK):
                    tile = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                    n0 = (n * BN + bn) * TN
                    nisa.dma_copy(dst=tile, src=rhs[k * TK:(k + 1) * TK, n0:n0 + TN])
                    column.append(tile)
                b_block.append(column)
            for bm in nl.affine_range(BM):
                for bn in nl.affine_range(BN):
                    acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(K // TK):
                        nisa.nc_matmul(dst=acc, stationary=a_block[bm][k], moving=b_block[bn][k])
                    out_tile = nl.ndarray(acc.shape, dtype=result.dtype, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=out_tile, src=acc)
                    m0, n0 = (m * BM + bm) * TM, (n * BN + bn) * TN
                    nisa.dma_copy(dst=result[m0:m0 + TM, n0:n0 + TN], src=out_tile)
    return result
"""
)

MATMUL_OPTIMIZED = (
    HEADER
    + """
@nki.jit
def matmul_optimized(lhsT, rhs, BLOCK_M_TILES=2, BLOCK_N_TILES=1, BLOCK_K_TILES=2):
    K, M = lhsT.shape
    _, N = rhs.shape
    TM, TK, TN = 128, 128, 512
    BM, BN, BK = TM * BLOCK_M_TILES, TN * BLOCK_N_TILES, TK * BLOCK_K_TILES
    assert M % BM == 0 and N % BN == 0 and K % BK == 0
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for n in nl.affine_range(N // BN):
        partial = []
        for m in range(M // BM):
            rows = []
            for bm in range(BLOCK_M_TILES):
                cols = []
                for bn in range(BLOCK_N_TILES):
                    tile = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.memset(dst=tile, value=0.0)
                    cols.append(tile)
                rows.append(cols)
            partial.append(rows)
        for k in nl.sequential_range(K // BK):
            b_tiles = []
            for bk in range(BLOCK_K_TILES):
                b_tile = nl.ndarray((TK, BN), dtype=rhs.dtype, buffer=nl.sbuf)
                k0 = (k * BLOCK_K_TILES + bk) * TK
                nisa.dma_copy(dst=b_tile[0:TK, 0:BN], src=rhs[k0:k0 + TK, n * BN:(n + 1) * BN])
                b_tiles.append(b_tile)
            for m in nl.affine_range(M // BM):
                a_tiles = []
                for bk in nl.affine_range(BLOCK_K_TILES):
                    a_tile = nl.ndarray((TK, BM), dtype=lhsT.dtype, buffer=nl.sbuf)
                    k0 = (k * BLOCK_K_TILES + bk) * TK
                    nisa.dma_copy(dst=a_tile, src=lhsT[k0:k0 + TK, m * BM:(m + 1) * BM])
                    a_tiles.append(a_tile)
                for bn in nl.affine_range(BLOCK_N_TILES):
                    for bm in nl.affine_range(BLOCK_M_TILES):
                        acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(BLOCK_K_TILES):
                            nisa.nc_matmul(
                                dst=acc,
                                stationary=a_tiles[bk][0:TK, bm * TM:(bm + 1) * TM],
                                moving=b_tiles[bk][0:TK, bn * TN:(bn + 1) * TN])
                        nisa.tensor_tensor(dst=partial[m][bm][bn], data1=partial[m][bm][bn],
                                           data2=acc, op=nl.add)
        for m in nl.affine_range(M // BM):
            for bm in nl.affine_range(BLOCK_M_TILES):
                packed = nl.ndarray((TM, BN), dtype=result.dtype, buffer=nl.sbuf)
                for bn in nl.affine_range(BLOCK_N_TILES):
                    nisa.tensor_copy(dst=packed[0:TM, bn * TN:(bn + 1) * TN],
                                     src=partial[m][bm][bn][0:TM, 0:TN])
                r0 = (m * BLOCK_M_TILES + bm) * TM
                nisa.dma_copy(dst=result[r0:r0 + TM, n * BN:(n + 1) * BN], src=packed)
    return result
"""
)

TENSOR_ADD = (
    HEADER
    + """
@nki.jit(platform_target="trn2")
def tensor_add(a_input, b_input):
    assert a_input.shape == b_input.shape
    assert a_input.dtype == b_input.dtype
    out = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    M, N = a_input.shape
    TILE_M, TILE_N = 128, 512
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            rows = slice(m * TILE_M, (m + 1) * TILE_M)
            cols = slice(n * TILE_N, (n + 1) * TILE_N)
            a_tile = nl.ndarray(shape=(TILE_M, TILE_N), dtype=a_input.dtype, buffer=nl.sbuf)
            b_tile = nl.ndarray(shape=(TILE_M, TILE_N), dtype=b_input.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a_tile, src=a_input[rows, cols])
            nisa.dma_copy(dst=b_tile, src=b_input[rows, cols])
            c_tile = nl.ndarray(shape=(TILE_M, TILE_N), dtype=a_input.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=c_tile, data1=a_tile, data2=b_tile, op=nl.add)
            nisa.dma_copy(dst=out[rows, cols], src=c_tile)
    return out
"""
)

TRANSPOSE_FREE_DIMS = (
    HEADER
    + """
@nki.jit
def transpose_free_dims(in_tensor, shape2D):
    out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    sz_p, _ = in_tensor.shape
    in_tile = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=in_tile, src=in_tensor)
    f1, f2 = shape2D
    out_tile = nl.ndarray(shape=(sz_p, f2 * f1), dtype=in_tensor.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(f1):
        for j in nl.affine_range(f2):
            nisa.tensor_copy(dst=out_tile[:, nl.ds(j * f1 + i, 1)],
                             src=in_tile[:, nl.ds(i * f2 + j, 1)])
    nisa.dma_copy(dst=out_tensor, src=out_tile)
    return out_tensor
"""
)

TRANSPOSE_FREE_DIMS_AP = (
    HEADER
    + """
@nki.jit
def transpose_free_dims_ap(x, shape2D):
    P, F = x.shape
    F1, F2 = shape2D
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    in_tile = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    out_tile = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=in_tile, src=x)
    nisa.tensor_copy(dst=out_tile, src=in_tile.ap([[F, P], [1, F2], [F2, F1]]))
    nisa.dma_copy(dst=out, src=out_tile)
    return out
"""
)

TRANSPOSE_PE = (
    HEADER
    + """
@nki.jit
def transpose_pe(x):
    R, C = x.shape
    T = 128
    out = nl.ndarray((C, R), dtype=x.dtype, buffer=nl.shared_hbm)
    for r in nl.affine_range(R // T):
        for c in nl.affine_range(C // T):
            tile = nl.ndarray((T, T), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=tile, src=x[r * T:(r + 1) * T, c * T:(c + 1) * T])
            flipped = nl.ndarray((T, T), dtype=x.dtype, buffer=nl.psum)
            nisa.nc_transpose(dst=flipped, data=tile)
            evicted = nl.ndarray((T, T), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=evicted, src=flipped)
            nisa.dma_copy(dst=out[c * T:(c + 1) * T, r * T:(r + 1) * T], src=evicted)
    return out
"""
)

TRANSPOSE_DMA = (
    HEADER
    + """
@nki.jit
def transpose_dma(x):
    R, C = x.shape
    out = nl.ndarray((C, R), dtype=x.dtype, buffer=nl.shared_hbm)
    flipped = nl.ndarray((C, R), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=flipped, src=x)
    nisa.dma_copy(dst=out, src=flipped)
    return out


@nki.jit
def transpose_dma_pattern(x):
    R, C = x.shape
    out = nl.ndarray((C, R), dtype=x.dtype, buffer=nl.shared_hbm)
    flipped = nl.ndarray((C, R), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=flipped, src=x.ap([[1, C], [C, R]]))
    nisa.dma_copy(dst=out, src=flipped)
    return out
"""
)

SOFTMAX = (
    HEADER
    + """
@nki.jit
def softmax_rows(x):
    R, C = x.shape
    out = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    for t in nl.affine_range(R // P):
        tile = nl.ndarray((P, C), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=x[t * P:(t + 1) * P, :])
        row_max = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=row_max, op=nl.maximum, data=tile, axis=(1,))
        neg_max = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=neg_max, data=row_max, op0=nl.multiply, operand0=-1.0)
        exps = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
        sums = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=exps, op=nl.exp, data=tile, bias=neg_max,
                        reduce_op=nl.add, reduce_res=sums, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        inv = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=sums)
        probs = nl.ndarray((P, C), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=probs, data=exps, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=out[t * P:(t + 1) * P, :], src=probs)
    return out
"""
)

RMSNORM = (
    HEADER
    + """
@nki.jit
def rmsnorm(x, gamma, eps=1e-6):
    R, C = x.shape
    P = 128
    out = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.shared_hbm)
    g = nl.ndarray((P, C), dtype=gamma.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=g, src=nl.broadcast_to(gamma, (P, C)))
    for t in range(R // P):
        tile = nl.ndarray((P, C), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=x[t * P:(t + 1) * P, 0:C])
        squares = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=squares, data1=tile, data2=tile, op=nl.multiply)
        total = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=total, op=nl.add, data=squares, axis=1, keepdims=True)
        scale = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=scale, data=total, op0=nl.multiply, operand0=1.0 / C,
                           op1=nl.add, operand1=eps)
        nisa.activation(dst=scale, op=nl.rsqrt, data=scale)
        normed = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=normed, op=nl.copy, data=tile, scale=scale)
        result = nl.ndarray((P, C), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=result, data1=normed, data2=g, op=nl.multiply)
        nisa.dma_copy(dst=out[t * P:(t + 1) * P, 0:C], src=result)
    return out
"""
)


def _random(shape: tuple[int, ...], dtype: np.dtype, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32).astype(dtype)


def _tolerance(dtype: np.dtype) -> dict[str, float]:
    return {"rtol": 2e-2, "atol": 2e-2} if dtype == BF16 else {"rtol": 1e-4, "atol": 1e-4}


def _assert_close(out: np.ndarray, ref: np.ndarray, dtype: np.dtype, scale: float = 1.0) -> None:
    assert out.dtype == dtype
    assert not np.isnan(out.astype(np.float32)).any()
    tol = _tolerance(dtype)
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=tol["rtol"], atol=tol["atol"] * scale)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), BF16], ids=["fp32", "bf16"])
@pytest.mark.parametrize(
    ("source", "k", "m", "n", "kwargs"),
    [
        (MATMUL_BASIC, 128, 64, 512, {}),
        (MATMUL_TILED, 384, 256, 1024, {}),
        (MATMUL_HOISTED, 256, 256, 1024, {}),
        (MATMUL_BLOCKED, 256, 256, 1024, {}),
        (MATMUL_OPTIMIZED, 512, 256, 1024, {}),
        (MATMUL_OPTIMIZED, 512, 512, 1024, {"BLOCK_M_TILES": 4, "BLOCK_N_TILES": 2, "BLOCK_K_TILES": 1}),
    ],
    ids=["basic", "tiled", "hoisted", "blocked", "optimized", "optimized-meta"],
)
def test_matmul_tutorials_match_numpy(
    source: str, k: int, m: int, n: int, kwargs: dict[str, Any], dtype: np.dtype
) -> None:
    lhsT, rhs = _random((k, m), dtype, 1), _random((k, n), dtype, 2)
    out = simulate(source, lhsT, rhs, **kwargs)
    ref = lhsT.astype(np.float32).T @ rhs.astype(np.float32)
    assert out.shape == (m, n)
    _assert_close(out, ref, dtype, scale=np.sqrt(k))


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), BF16], ids=["fp32", "bf16"])
def test_tensor_add_matches_numpy(dtype: np.dtype) -> None:
    a, b = _random((256, 1024), dtype, 3), _random((256, 1024), dtype, 4)
    out = simulate(TENSOR_ADD, a, b)
    _assert_close(out, a.astype(np.float32) + b.astype(np.float32), dtype)


@pytest.mark.parametrize(
    "source", [TRANSPOSE_FREE_DIMS, TRANSPOSE_FREE_DIMS_AP], ids=["tensor_copy-ds", "access-pattern"]
)
def test_free_dim_transpose_matches_numpy(source: str) -> None:
    p, f1, f2 = 5, 3, 4
    x = np.arange(p * f1 * f2, dtype=np.float32).reshape(p, f1 * f2)
    out = simulate(source, x, (f1, f2))
    ref = x.reshape(p, f1, f2).transpose(0, 2, 1).reshape(p, f1 * f2)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), BF16], ids=["fp32", "bf16"])
def test_tensor_engine_transpose_is_exact(dtype: np.dtype) -> None:
    x = _random((256, 384), dtype, 5)
    out = simulate(TRANSPOSE_PE, x)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, x.T)


@pytest.mark.parametrize("kernel_name", ["transpose_dma", "transpose_dma_pattern"])
def test_dma_transpose_is_exact(kernel_name: str) -> None:
    x = _random((96, 128), np.dtype(np.float32), 6)
    out = simulate(TRANSPOSE_DMA, x, kernel_name=kernel_name)
    np.testing.assert_array_equal(out, x.T)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), BF16], ids=["fp32", "bf16"])
def test_softmax_with_activation_reduce_and_tensor_scalar(dtype: np.dtype) -> None:
    x = _random((256, 200), dtype, 7)
    out = simulate(SOFTMAX, x)
    xf = x.astype(np.float32)
    e = np.exp(xf - xf.max(axis=1, keepdims=True))
    _assert_close(out, e / e.sum(axis=1, keepdims=True), dtype, scale=0.1)


def test_rmsnorm_with_broadcast_and_two_op_tensor_scalar() -> None:
    x = _random((256, 64), np.dtype(np.float32), 8)
    gamma = _random((1, 64), np.dtype(np.float32), 9)
    out = simulate(RMSNORM, x, gamma)
    ref = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * gamma
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


ACTIVATIONS = (
    HEADER
    + """
@nki.jit
def activate(x, bias, op_name):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    tile = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=x)
    b = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=b, src=bias)
    result = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=result, op=getattr(nl, op_name), data=tile, bias=b, scale=0.5)
    nisa.dma_copy(dst=out, src=result)
    return out
"""
)


def _erf(x: np.ndarray) -> np.ndarray:
    from math import erf

    return np.vectorize(erf)(x.astype(np.float64))


@pytest.mark.parametrize(
    ("op_name", "reference"),
    [
        ("exp", np.exp),
        ("tanh", np.tanh),
        ("relu", lambda v: np.maximum(v, 0)),
        ("sigmoid", lambda v: 1 / (1 + np.exp(-v))),
        ("gelu", lambda v: 0.5 * v * (1 + _erf(v / np.sqrt(2)))),
        ("gelu_apprx_tanh", lambda v: 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v**3)))),
        ("silu", lambda v: v / (1 + np.exp(-v))),
        ("square", np.square),
        ("copy", lambda v: v),
        ("abs", np.abs),
        ("softplus", lambda v: np.log1p(np.exp(v))),
    ],
)
def test_activation_functions_match_numpy(op_name: str, reference) -> None:
    x = _random((64, 96), np.dtype(np.float32), 10)
    bias = _random((64, 1), np.dtype(np.float32), 11)
    out = simulate(ACTIVATIONS, x, bias, op_name)
    np.testing.assert_allclose(out, reference(x * 0.5 + bias), rtol=1e-5, atol=1e-6)
