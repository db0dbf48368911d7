"""PSUM accumulation: per element, the first matmul write overwrites, later ones add.

The kernel multiplies ``x`` [128, 128] by ``y`` [128, 512] twice into one PSUM tile,
with the statements between the two matmuls given by each test.
"""

from __future__ import annotations

import numpy as np
import pytest

from nkigym_graph.nki_sim import NKISimulationError, simulate

TEMPLATE = """import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def twice(x, y):
    xs = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
    ys = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    nisa.dma_copy(dst=ys, src=y)
    acc = {alloc}
{body}
    res = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res)
    return out
"""
FRESH = "nl.ndarray((128, 512), nl.float32, buffer=nl.psum)"
ZEROS = "nl.zeros((128, 512), nl.float32, buffer=nl.psum)"
BODY_LINE = TEMPLATE.splitlines().index("{body}") + 1
"""Kernel line of the first body statement."""


def _run(body: str, alloc: str = FRESH) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((128, 128), dtype=np.float32)
    y = rng.standard_normal((128, 512), dtype=np.float32)
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    out = simulate(TEMPLATE.format(alloc=alloc, body=lines), x, y)
    return out, x.T @ y


MM = "nisa.nc_matmul(dst=acc, stationary=xs, moving=ys{extra})"


def test_first_write_overwrites_later_writes_accumulate() -> None:
    out, product = _run("\n".join([MM.format(extra=""), MM.format(extra="")]))
    np.testing.assert_allclose(out, 2 * product, rtol=1e-5, atol=1e-4)


def test_accumulate_false_starts_a_new_group() -> None:
    out, product = _run("\n".join([MM.format(extra=""), MM.format(extra=", accumulate=False")]))
    np.testing.assert_allclose(out, product, rtol=1e-5, atol=1e-4)


def test_accumulate_true_on_fresh_psum_reads_uninitialised_memory() -> None:
    out, _ = _run(MM.format(extra=", accumulate=True"))
    assert np.isnan(out).all()


def test_zeroed_psum_is_overwritten_by_the_first_matmul() -> None:
    out, product = _run("\n".join([MM.format(extra=""), MM.format(extra="")]), alloc=ZEROS)
    np.testing.assert_allclose(out, 2 * product, rtol=1e-5, atol=1e-4)


def test_reading_psum_does_not_end_the_group() -> None:
    body = "\n".join(
        [
            MM.format(extra=""),
            "peek = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)",
            "nisa.tensor_copy(dst=peek, src=acc)",
            MM.format(extra=""),
        ]
    )
    out, product = _run(body)
    np.testing.assert_allclose(out, 2 * product, rtol=1e-5, atol=1e-4)


def test_accumulation_state_is_per_element() -> None:
    body = "\n".join(
        [
            "nisa.nc_matmul(dst=acc[:, 0:256], stationary=xs, moving=ys[:, 0:256])",
            MM.format(extra=""),
        ]
    )
    out, product = _run(body)
    np.testing.assert_allclose(out[:, :256], 2 * product[:, :256], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(out[:, 256:], product[:, 256:], rtol=1e-5, atol=1e-4)


def test_matmul_after_memset_and_matmul_is_flagged() -> None:
    body = "\n".join([MM.format(extra=""), "nisa.memset(dst=acc, value=0.0)", MM.format(extra="")])
    with pytest.raises(NKISimulationError) as caught:
        _run(body)
    assert caught.value.rule == "matmul.accumulate_non_matmul"
    assert caught.value.line == BODY_LINE + 2


def test_mixed_state_with_partial_non_matmul_write_is_flagged() -> None:
    body = "\n".join(
        [
            "nisa.nc_matmul(dst=acc[:, 0:256], stationary=xs, moving=ys[:, 0:256])",
            "nisa.memset(dst=acc[:, 0:128], value=0.0)",
            "nisa.memset(dst=acc[:, 300:400], value=0.0)",
            MM.format(extra=""),
        ]
    )
    with pytest.raises(NKISimulationError, match="accumulate_non_matmul"):
        _run(body)


def test_reused_psum_tile_keeps_accumulating_across_iterations() -> None:
    body = "\n".join(["for i in range(3):", "    " + MM.format(extra="")])
    out, product = _run(body)
    np.testing.assert_allclose(out, 3 * product, rtol=1e-5, atol=1e-4)


TWO_BANKS = """import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def two_banks(x, y):
    xs = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
    ys = nl.ndarray((128, 1024), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    nisa.dma_copy(dst=ys, src=y)
    acc = nl.ndarray((128, 1024), nl.float32, buffer=nl.psum)
    for half in range(2):
        cols = slice(half * 512, (half + 1) * 512)
        nisa.nc_matmul(dst=acc[:, cols], stationary=xs, moving=ys[:, cols])
    res = nl.ndarray((128, 1024), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    out = nl.ndarray((128, 1024), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res)
    return out
"""


def test_matmuls_into_each_bank_of_a_two_bank_tile() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((128, 128), dtype=np.float32)
    y = rng.standard_normal((128, 1024), dtype=np.float32)
    out, report = simulate(TWO_BANKS, x, y, report=True)
    np.testing.assert_allclose(out, x.T @ y, rtol=1e-5, atol=1e-4)
    assert report.peak_psum_bytes == 2 * 2048
