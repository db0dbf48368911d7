"""Uninitialised memory reads as NaN; peak SBUF/PSUM bytes follow tile live ranges."""

from __future__ import annotations

import numpy as np
import pytest

from nkigym_graph.nki_sim import NKISimulationError, SimulationReport, Simulator, simulate

HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"

PARTIAL_WRITE = (
    HEADER
    + """
@nki.jit
def partial(x):
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
    tile = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile[:, 0:32], src=x[:, 0:32])
    nisa.dma_copy(dst=out[0:64, :], src=tile[0:64, :])
    return out
"""
)


def test_unwritten_sbuf_and_hbm_read_as_nan() -> None:
    x = np.random.default_rng(0).standard_normal((128, 64), dtype=np.float32)
    out = simulate(PARTIAL_WRITE, x)
    np.testing.assert_array_equal(out[0:64, 0:32], x[0:64, 0:32])
    assert np.isnan(out[0:64, 32:]).all()  # SBUF columns never loaded
    assert np.isnan(out[64:, :]).all()  # HBM rows never stored


READ_OUTPUT_FIRST = (
    HEADER
    + """
@nki.jit
def read_back(x):
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
    tile = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=out)
    nisa.tensor_tensor(dst=tile, data1=tile, data2=tile, op=nl.add)
    nisa.dma_copy(dst=out, src=tile)
    return out
"""
)


def test_reading_an_output_before_writing_it_reads_nan() -> None:
    out = simulate(READ_OUTPUT_FIRST, np.ones((128, 64), np.float32))
    assert np.isnan(out).all()


INT_TILE = (
    HEADER
    + """
@nki.jit
def int_tile(x):
    out = nl.ndarray((128, 4), nl.int32, buffer=nl.shared_hbm)
    tile = nl.ndarray((128, 4), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=out, src=tile)
    return out
"""
)


def test_uninitialised_integers_read_as_the_most_negative_value() -> None:
    out = simulate(INT_TILE, np.ones((128, 4), np.float32))
    assert (out == np.iinfo(np.int32).min).all()


TILED = (
    HEADER
    + """
@nki.jit
def tiled(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in range(M // 128):
        for n in range(N // 512):
            acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
            for k in range(K // 128):
                a = nl.ndarray((128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                nisa.dma_copy(dst=b, src=rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                nisa.nc_matmul(dst=acc, stationary=a, moving=b)
            res = nl.ndarray((128, 512), dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=res)
    return result
"""
)

HOISTED = (
    HEADER
    + """
@nki.jit
def hoisted(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    a = [nl.ndarray((128, M), dtype=lhsT.dtype, buffer=nl.sbuf) for k in range(K // 128)]
    for k in range(K // 128):
        nisa.dma_copy(dst=a[k], src=lhsT[k * 128:(k + 1) * 128, :])
    for n in range(N // 512):
        b = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
        acc = [nl.ndarray((128, 512), nl.float32, buffer=nl.psum) for m in range(M // 128)]
        for k in range(K // 128):
            nisa.dma_copy(dst=b, src=rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
            for m in range(M // 128):
                nisa.nc_matmul(dst=acc[m], stationary=a[k][:, m * 128:(m + 1) * 128], moving=b)
        for m in range(M // 128):
            res = nl.ndarray((128, 512), dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc[m])
            nisa.dma_copy(dst=result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=res)
    return result
"""
)


def _operands(k: int, m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    return (rng.standard_normal((k, m), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32))


def test_tiled_matmul_report() -> None:
    lhsT, rhs = _operands(384, 256, 1024)
    out, report = simulate(TILED, lhsT, rhs, report=True)
    np.testing.assert_allclose(out, lhsT.T @ rhs, rtol=1e-4, atol=1e-3)
    assert isinstance(report, SimulationReport)
    # one [128,128] + one [128,512] fp32 input tile are live at a time, then the result tile
    assert report.peak_sbuf_bytes == 128 * 4 + 512 * 4
    assert report.peak_psum_bytes == 512 * 4
    assert (report.sbuf_capacity, report.psum_capacity) == (192 * 1024, 16 * 1024)
    tiles = (256 // 128) * (1024 // 512)
    assert report.instruction_counts["nisa.nc_matmul"] == tiles * 3
    assert report.instruction_counts["nisa.dma_copy"] == tiles * (2 * 3 + 1)
    assert report.instructions == sum(report.instruction_counts.values())


def test_hoisted_matmul_report_counts_every_live_tile() -> None:
    k, m, n = 256, 384, 1024
    lhsT, rhs = _operands(k, m, n)
    sim = Simulator(HOISTED)
    out = sim.run(lhsT, rhs)
    np.testing.assert_allclose(out, lhsT.T @ rhs, rtol=1e-4, atol=1e-3)
    # all K/128 lhsT row blocks and the rhs tile (dead before the result tile is made)
    assert sim.peak_sbuf_bytes == (k // 128) * m * 4 + 512 * 4
    assert sim.peak_psum_bytes == (m // 128) * 512 * 4


REBIND = (
    HEADER
    + """
@nki.jit
def rebind(x):
    out = nl.ndarray((128, 4), nl.float32, buffer=nl.shared_hbm)
    for i in range(4):
        big = nl.ndarray((128, 30000), nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=big, value=float(i))
        nisa.dma_copy(dst=out, src=big[:, 0:4])
    return out
"""
)


def test_rebinding_a_tile_in_a_loop_does_not_count_both() -> None:
    out, report = simulate(REBIND, np.zeros((1, 1), np.float32), report=True)
    np.testing.assert_array_equal(out, np.full((128, 4), 3.0, np.float32))
    assert report.peak_sbuf_bytes == 30000 * 4


HELD = (
    HEADER
    + """
@nki.jit
def held(x):
    out = nl.ndarray((128, 4), nl.float32, buffer=nl.shared_hbm)
    tiles = []
    for i in range(2):
        big = nl.ndarray((128, 30000), nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=big, value=float(i))
        tiles.append(big)
    for big in tiles:
        nisa.dma_copy(dst=out, src=big[:, 0:4])
    return out
"""
)


def test_tiles_used_later_stay_live_and_overflow_sbuf() -> None:
    sim = Simulator(HELD)
    with pytest.raises(NKISimulationError) as caught:
        sim.run(np.zeros((1, 1), np.float32))
    err = caught.value
    line = HELD.splitlines().index("        big = nl.ndarray((128, 30000), nl.float32, buffer=nl.sbuf)") + 1
    assert (err.rule, err.instruction, err.line) == ("sbuf.capacity", "nl.ndarray", line)
    assert "240000 bytes per partition > 196608" in str(err)
    assert sim.report is not None and sim.report.peak_sbuf_bytes == 2 * 30000 * 4


def test_each_run_gets_its_own_report() -> None:
    sim = Simulator(TILED)
    sim.run(*_operands(128, 128, 512))
    first = sim.report
    sim.run(*_operands(256, 256, 512))
    assert first is not None and sim.report is not None
    assert first.instruction_counts["nisa.nc_matmul"] == 1
    assert sim.report.instruction_counts["nisa.nc_matmul"] == 4
