"""The NKI lowering of the broadcasting ops, activation scale/bias, gelu/silu and mean, and
the instruction fusions: every kernel, run in the NKI simulator, equals the interpreter."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nki_backend.nki_cases import check, run
from workload_functions import softmax

import nkigym_graph as ng

PIPELINE = ["data_reuse", "operand_merge", "reduction_merge", "dead_code"]
BF16 = np.dtype(ml_dtypes.bfloat16)


def centre(x: Any) -> Any:
    return ng.tensor_tensor(x, ng.tensor_reduce(x, op="max"), op="subtract")


def affine_rows(x: Any, g: Any, b: Any) -> Any:
    return ng.tensor_tensor(ng.tensor_tensor(x, g, op="multiply"), b, op="add")


def gelu_bias(x: Any, b: Any) -> Any:
    return ng.activation(x, op="gelu", scale=0.5, bias=b)


def silu_shifted(x: Any) -> Any:
    return ng.activation(x, op="silu", scale=2.0, bias=0.25)


def row_mean(x: Any) -> Any:
    return ng.tensor_reduce(x, op="mean")


def normalize(x: Any) -> Any:
    mean = ng.tensor_reduce(x, op="mean")
    rstd = ng.activation(ng.tensor_reduce(ng.activation(x, op="square"), op="mean"), op="rsqrt", bias=1.0)
    return ng.tensor_scalar(ng.tensor_scalar(x, mean, op="subtract"), rstd, op="multiply")


CASES = {
    "centre": (centre, {"x": (200, 300)}),
    "affine_rows": (affine_rows, {"x": (200, 700), "g": (1, 700), "b": (1, 700)}),
    "gelu_bias": (gelu_bias, {"x": (300, 200), "b": (300, 1)}),
    "silu_shifted": (silu_shifted, {"x": (130, 260)}),
    "row_mean": (row_mean, {"x": (200, 1000)}),
    "softmax": (softmax, {"x": (256, 600)}),
    "normalize": (normalize, {"x": (200, 300)}),
}


@pytest.mark.parametrize("saturate", [False, True], ids=["tiled", "saturated"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_matches_interpreter(name: str, saturate: bool, rng: np.random.Generator) -> None:
    func, shapes = CASES[name]
    program = ng.tile(func, shapes)
    check(ng.saturate(program, PIPELINE) if saturate else program, rng)


@pytest.mark.parametrize("name", ["softmax", "normalize", "affine_rows"])
def test_bfloat16_kernel_within_bf16_tolerance(name: str, rng: np.random.Generator) -> None:
    func, shapes = CASES[name]
    program = ng.saturate(ng.tile(func, shapes, dtype=BF16), PIPELINE)
    arrays = {p.name: rng.standard_normal(p.shape).astype(BF16) for p in program.params}
    _, out, _ = run(program, arrays)
    exact = func(*(a.astype(np.float64) for a in arrays.values()))  # numpy on the same bf16 inputs
    np.testing.assert_allclose(out.astype(np.float64), exact, rtol=2e-2, atol=2e-2)


def _kernel(func: Any, shapes: dict[str, tuple[int, int]]) -> str:
    return ng.emit(ng.saturate(ng.tile(func, shapes), PIPELINE), backend="nki")


def test_exp_and_row_sum_are_one_scalar_engine_instruction() -> None:
    text = _kernel(softmax, {"x": (128, 512)})
    (line,) = [ln for ln in text.splitlines() if "nisa.activation(" in ln and "op=nl.exp" in ln]
    assert (
        "reduce_op=nl.add" in line
        and "reduce_res=" in line
        and "reduce_cmd=nisa.reduce_cmd.reset_reduce" in line
    )
    assert text.count("nisa.tensor_reduce(") == 1  # the max; the sum rides on the exponential


def test_max_and_its_negation_are_one_reduction() -> None:
    text = _kernel(softmax, {"x": (128, 512)})
    assert "negate=True" in text and "operand0=-1.0" not in text


def test_two_scalar_steps_are_one_instruction() -> None:
    text = _kernel(normalize, {"x": (128, 256)})
    assert "op0=nl.subtract" in text and "op1=nl.multiply" in text


def test_a_row_is_spread_over_the_partitions_once() -> None:
    def rows_twice(x: Any, g: Any) -> Any:
        return ng.tensor_tensor(ng.tensor_tensor(x, g, op="multiply"), g, op="add")

    text = _kernel(rows_twice, {"x": (512, 256), "g": (1, 256)})
    assert text.count("nisa.memset(") == 1  # the ones row
    assert text.count("stationary=ones") == 1  # one spread of g, read by all four row blocks


def test_activation_constant_bias_and_scale_are_arguments() -> None:
    text = _kernel(silu_shifted, {"x": (128, 128)})
    assert "op=nl.silu" in text and "bias=0.25" in text and "scale=2.0" in text


def test_row_statistics_are_float32_in_a_bfloat16_kernel() -> None:
    text = ng.emit(ng.saturate(ng.tile(softmax, {"x": (128, 512)}, dtype=BF16), PIPELINE), backend="nki")
    declared = [line for line in text.splitlines() if "= nl.ndarray((128, 1)" in line]
    assert declared and all("nl.float32" in line for line in declared)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    r=st.integers(1, 260),
    c=st.integers(1, 700),
    op=st.sampled_from(["add", "subtract", "multiply", "divide", "maximum", "minimum"]),
    form=st.sampled_from(["column", "row"]),
    saturate=st.booleans(),
    seed=st.integers(0, 9),
)
def test_broadcast_ops_at_random_shapes(
    r: int, c: int, op: str, form: str, saturate: bool, seed: int
) -> None:
    def f(x: Any, y: Any) -> Any:
        return ng.tensor_tensor(x, y, op=op)

    program = ng.tile(f, {"x": (r, c), "y": (r, 1) if form == "column" else (1, c)})
    rng = np.random.default_rng(seed)
    check(ng.saturate(program, PIPELINE) if saturate else program, rng)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(r=st.integers(1, 260), c=st.integers(1, 900), online=st.booleans(), seed=st.integers(0, 9))
def test_softmax_at_random_shapes(r: int, c: int, online: bool, seed: int) -> None:
    program = ng.saturate(ng.tile(softmax, {"x": (r, c)}, online=online), PIPELINE)
    check(program, np.random.default_rng(seed))
