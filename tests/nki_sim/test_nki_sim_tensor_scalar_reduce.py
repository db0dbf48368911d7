"""``nisa.tensor_scalar_reduce`` against numpy: the element-wise result and its per-partition
reduction (every reduce op, a [P, 1] operand, reversed operands, PSUM input), the rules it
checks, and its price on the Vector Engine."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nkigym_graph.nki_sim import NKISimulationError, profile, simulate

HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"
REDUCERS = {"add": np.sum, "multiply": np.prod, "max": np.max, "min": np.min}


def _kernel(rows: int, cols: int, op0: str, operand: str, reduce_op: str, reverse: bool = False) -> str:
    """``x <op0> operand`` of ``x`` [rows, cols] and its reduction, side by side in one output."""
    return f"""{HEADER}@nki.jit
def kernel(x, s):
    t = nl.ndarray(({rows}, {cols}), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    c = nl.ndarray(({rows}, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=c, src=s)
    y = nl.ndarray(({rows}, {cols}), dtype=nl.float32, buffer=nl.sbuf)
    r = nl.ndarray(({rows}, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_reduce(dst=y, data=t, op0=nl.{op0}, operand0={operand},
                              reduce_op=nl.{reduce_op}, reduce_res=r, reverse0={reverse})
    out = nl.ndarray(({rows}, {cols + 1}), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[:, 0:{cols}], src=y)
    nisa.dma_copy(dst=out[:, {cols}:{cols + 1}], src=r)
    return out
"""


@settings(max_examples=30, deadline=None)
@given(
    rows=st.integers(1, 128),
    cols=st.integers(1, 600),
    op0=st.sampled_from(["add", "subtract", "multiply"]),
    reduce_op=st.sampled_from(sorted(REDUCERS)),
    tile_operand=st.booleans(),
    reverse=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_result_and_reduction_equal_numpy(
    rows: int, cols: int, op0: str, reduce_op: str, tile_operand: bool, reverse: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = (1 + 0.01 * rng.standard_normal((rows, cols))).astype(np.float32)
    if reduce_op == "multiply":  # results near +-1: a product of 600 of them stays finite
        base = 1.0 if op0 == "multiply" else 0.0
        s = (base + 0.001 * rng.standard_normal((rows, 1))).astype(np.float32)
        scalar = base + 0.0005
    else:
        s = (0.5 + rng.random((rows, 1))).astype(np.float32)
        scalar = 0.75
    operand = "c" if tile_operand else repr(scalar)
    got = simulate(_kernel(rows, cols, op0, operand, reduce_op, reverse), x, s)
    value = s.astype(np.float64) if tile_operand else scalar
    fn = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply}[op0]
    result = fn(value, x.astype(np.float64)) if reverse else fn(x.astype(np.float64), value)
    np.testing.assert_allclose(got[:, :cols], result, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[:, cols], REDUCERS[reduce_op](result, axis=1), rtol=1e-4, atol=1e-5)


def test_psum_scores_copied_out_with_their_row_maximum() -> None:
    """The use it exists for: a matmul's scores leave PSUM scaled, with their row maximum."""
    kernel = f"""{HEADER}@nki.jit
def kernel(q_t, k_t):
    q = nl.ndarray((128, 128), dtype=q_t.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=q, src=q_t)
    k = nl.ndarray((128, 512), dtype=k_t.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=k, src=k_t)
    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=p, stationary=q, moving=k)
    y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    m = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_reduce(dst=y, data=p, op0=nl.multiply, operand0=0.125, reduce_op=nl.max, reduce_res=m)
    out = nl.ndarray((128, 513), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[:, 0:512], src=y)
    nisa.dma_copy(dst=out[:, 512:513], src=m)
    return out
"""
    rng = np.random.default_rng(3)
    q_t, k_t = (
        rng.standard_normal((128, 128), dtype=np.float32),
        rng.standard_normal((128, 512), dtype=np.float32),
    )
    got = simulate(kernel, q_t, k_t)
    scores = q_t.astype(np.float64).T @ k_t.astype(np.float64) * 0.125
    np.testing.assert_allclose(got[:, :512], scores, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[:, 512], scores.max(axis=1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("op0", "reduce_op", "result_shape", "rule"),
    [
        ("add", "subtract", "(8, 1)", "tensor_scalar_reduce.op"),
        ("bitwise_and", "add", "(8, 1)", "tensor_scalar_reduce.op"),
        ("add", "add", "(8, 2)", "tensor_scalar_reduce.reduce_res"),
    ],
)
def test_bad_operators_and_results_name_their_rule(
    op0: str, reduce_op: str, result_shape: str, rule: str
) -> None:
    kernel = f"""{HEADER}@nki.jit
def kernel(x):
    t = nl.ndarray((8, 16), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    y = nl.ndarray((8, 16), dtype=nl.float32, buffer=nl.sbuf)
    r = nl.ndarray({result_shape}, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_reduce(dst=y, data=t, op0=nl.{op0}, operand0=1.0,
                              reduce_op=nl.{reduce_op}, reduce_res=r)
    out = nl.ndarray((8, 16), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=y)
    return out
"""
    with pytest.raises(NKISimulationError) as caught:
        simulate(kernel, np.ones((8, 16), dtype=np.float32))
    assert caught.value.rule == rule


def test_priced_like_a_one_input_vector_instruction() -> None:
    cols = 2048
    prof = profile(
        _kernel(128, cols, "multiply", "0.5", "max"),
        np.ones((128, cols), np.float32),
        np.ones((128, 1), np.float32),
    )
    (event,) = [e for e in prof.events if e.name == "nisa.tensor_scalar_reduce"]
    (timed,) = [t for e, t in zip(prof.events, prof.timed, strict=True) if e is event]
    c = prof.constants
    assert event.engine == "Vector" and event.inputs == 1 and event.elements == cols
    expected_ns = (cols * c.vector_cycles_per_element + c.vector_fixed_cycles) / c.vector_clock_ghz
    assert timed.end - timed.start == pytest.approx(expected_ns)
