"""The trn2 cost model's engine hand-overs and Scalar Engine fixed cost, against figures
worked out by hand from the documented constants (benchmarks/results/calibration.md):
a compute instruction that needs another compute engine's result starts 500 ns after
it ends (``engine_sync_ns``); a Scalar instruction costs 200 fixed cycles at 1.2 GHz, a
Vector one 100 at 0.96 GHz; a hardware-DGE transfer 600 ns of latency plus, per DMA
queue (16; a 128-partition tile puts 8 rows on each), every row at 23 B/ns plus 12 ns."""

from __future__ import annotations

import numpy as np
import pytest

import nkigym_graph as ng
from nkigym_graph.cost import estimate
from nkigym_graph.nki_sim.timing import profile

SYNC = 500e-9
DMA_FIXED = 600e-9


def _transfer(bytes_per_row: int) -> float:
    return DMA_FIXED + 8 * (bytes_per_row / 23.0 + 12.0) * 1e-9


def _vector(elements: int) -> float:
    return (elements + 100) / 0.96e9


def _scalar(elements: int) -> float:
    return (elements + 200) / 1.2e9


def _max_then_exp(x):
    return ng.activation(ng.tensor_reduce(x, op="max"), op="exp")


def _max_then_scale(x):
    return ng.tensor_scalar(ng.tensor_reduce(x, op="max"), 2.0, op="multiply")


def test_a_scalar_instruction_after_a_vector_result_waits_for_the_hand_over() -> None:
    program = ng.tile(_max_then_exp, {"x": (128, 128)})
    # load x (512 B rows), max on the Vector Engine, hand-over, exp of the [128, 1]
    # maxima on the Scalar Engine, store the [128, 1] result (4 B rows)
    expected = _transfer(512) + _vector(128) + SYNC + _scalar(1) + _transfer(4)
    assert estimate(program).seconds == pytest.approx(expected, rel=1e-9)


def test_no_hand_over_on_one_engine() -> None:
    program = ng.tile(_max_then_scale, {"x": (128, 128)})
    # the max and the scaling both run on the Vector Engine: no semaphore between them
    expected = _transfer(512) + _vector(128) + _vector(1) + _transfer(4)
    assert estimate(program).seconds == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("func", [_max_then_exp, _max_then_scale])
def test_the_chains_agree_with_the_profile_of_their_kernels(func) -> None:
    program = ng.tile(func, {"x": (128, 128)})
    x = np.random.default_rng(0).standard_normal((128, 128)).astype(np.float32)
    profiled = profile(ng.emit(program, backend="nki"), x).total_ns * 1e-9
    assert estimate(program).seconds == pytest.approx(profiled, rel=1e-6)


def _masked_scores(a, b):
    return ng.affine_select(ng.nc_matmul(a, b))


def test_a_gpsimd_reader_of_psum_waits_for_the_hand_over_and_the_copy() -> None:
    # GpSimd cannot read PSUM: the matmul's result is copied to SBUF (a Vector task) and
    # the affine_select also needs the Tensor Engine's result through a semaphore (the
    # model once crashed on a statement with both)
    program = ng.tile(_masked_scores, {"a": (128, 128), "b": (128, 128)})
    loads = DMA_FIXED + 2 * 8 * (512 / 23.0 + 12.0) * 1e-9  # two loads, queued one after the other
    matmul = (16 + 4 * 128) / 2.4e9  # fp32 moving columns at a quarter of the rate
    gpsimd = (150 + 2 * 128) / 1.4e9
    at_least = loads + matmul + SYNC + gpsimd + _transfer(512)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((128, 128)).astype(np.float32) for _ in range(2))
    profiled = profile(ng.emit(program, backend="nki"), a, b).total_ns * 1e-9
    assert at_least <= estimate(program).seconds <= profiled
