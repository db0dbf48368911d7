"""Every emitted kernel, run in the NKI simulator, equals the interpreter on random inputs:
the tiling tests' programs, before and after saturation, in float32 and bfloat16."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from nki_backend.nki_cases import CASES, Case, check, inputs, matmul_tanh, run, tiled

import nkigym_graph as ng

BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.mark.parametrize("saturate", [False, True], ids=["tiled", "saturated"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_kernel_matches_interpreter(case: Case, saturate: bool, rng: np.random.Generator) -> None:
    program = tiled(case, saturate=saturate)
    artifact, report = check(program, rng)
    assert report.peak_sbuf_bytes <= report.sbuf_capacity
    assert report.peak_psum_bytes <= report.psum_capacity
    assert artifact.facts["peak_sbuf_bytes"] == report.peak_sbuf_bytes
    assert artifact.facts["peak_psum_bytes"] == report.peak_psum_bytes


@pytest.mark.parametrize("saturate", [False, True], ids=["tiled", "saturated"])
@pytest.mark.parametrize(
    "case", [c for c in CASES if c.id in ("double_matmul", "matmul_bias", "row_sum")], ids=lambda c: c.id
)
def test_straight_line_kernel_matches_interpreter(
    case: Case, saturate: bool, rng: np.random.Generator
) -> None:
    artifact, _ = check(tiled(case, saturate=saturate), rng, roll_loops=False)
    assert artifact.facts["loops"] == 0 and "in range(" not in artifact.text


@pytest.mark.parametrize("saturate", [False, True], ids=["tiled", "saturated"])
def test_bfloat16_kernel_within_bf16_tolerance(saturate: bool, rng: np.random.Generator) -> None:
    """Tiled with dtype bfloat16: bf16 tiles, fp32 PSUM accumulation, bf16 output."""
    program = tiled(
        Case("mm_tanh", matmul_tanh, {"a": (300, 200), "b": (300, 384)}), dtype=BF16, saturate=saturate
    )
    arrays = {name: (a / 8).astype(BF16) for name, a in inputs(program, rng, np.float32).items()}
    artifact, out, _ = run(program, arrays)
    assert out.dtype == BF16 and "dtype=nl.bfloat16" in artifact.text
    expected = ng.interpret(program, **arrays).astype(np.float64)
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=2e-2, atol=2e-2)
    exact = np.tanh(arrays["a"].astype(np.float64).T @ arrays["b"].astype(np.float64))
    np.testing.assert_allclose(out.astype(np.float64), exact, rtol=2e-2, atol=2e-2)


def test_dtype_option_emits_a_float64_program_as_float32(rng: np.random.Generator) -> None:
    program = ng.tile(matmul_tanh, {"a": (256, 128), "b": (256, 200)}, dtype=np.float64)
    arrays = inputs(program, rng)
    artifact, out, _ = run(program, arrays, dtype="float32")
    assert out.dtype == np.float32 and "nl.float64" not in artifact.text
    np.testing.assert_allclose(out, ng.interpret(program, **arrays), rtol=1e-4, atol=1e-4)
