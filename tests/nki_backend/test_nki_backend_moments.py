"""A row's mean and mean square from ``nisa.bn_stats`` / ``nisa.bn_aggr``: which statements
form a group, when the engine model takes the group's Vector pass, and kernels using it
(layer norm at ragged shapes, fp32 and bf16, and groups whose sums other statements
read) equal to float64 numpy."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nkigym_graph as ng
from nkigym_graph.ir.targets import TRN2
from nkigym_graph.nki_sim.timing.constants import TRN2_TIMING
from nkigym_graph_plugins.nki_backend import moments
from nkigym_graph_plugins.nki_backend.engines import SCALAR, VECTOR, EngineLoads
from nkigym_graph_plugins.nki_backend.fusion import plan_fusions
from nkigym_graph_plugins.nki_backend.lower import kernel_types, lower_program
from nkigym_graph_plugins.nki_backend.lowering import LOWERINGS
from nkigym_graph_plugins.nki_backend.moments import Moments, chunks, plan_moments, prefers_moments
from nkigym_graph_plugins.nki_backend.render import KernelText, render_kernel

BF16 = np.dtype(ml_dtypes.bfloat16)
EPS = 1e-5


def layernorm(x: Any, g: Any, b: Any) -> Any:
    """As ``examples/workloads.py`` writes it: the variance as mean(x^2) - mean^2."""
    mean = ng.tensor_reduce(x, op="mean")
    mean_square = ng.tensor_reduce(ng.activation(x, op="square"), op="mean")
    variance = ng.tensor_tensor(mean_square, ng.activation(mean, op="square"), op="subtract")
    rstd = ng.activation(variance, op="rsqrt", bias=EPS)
    normed = ng.tensor_scalar(ng.tensor_scalar(x, mean, op="subtract"), rstd, op="multiply")
    return ng.tensor_tensor(ng.tensor_tensor(normed, g, op="multiply"), b, op="add")


def layernorm_numpy(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    centred = x - x.mean(axis=1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=1, keepdims=True) + EPS) * g + b


def sums(x: Any) -> Any:
    """Both sums read by another statement: ``x * sum(x) + sum(x^2)``."""
    total = ng.tensor_reduce(x, op="sum")
    squares = ng.tensor_reduce(ng.activation(x, op="square"), op="sum")
    return ng.tensor_scalar(ng.tensor_scalar(x, total, op="multiply"), squares, op="add")


def sums_numpy(x: np.ndarray) -> np.ndarray:
    return x * x.sum(axis=1, keepdims=True) + (x**2).sum(axis=1, keepdims=True)


def means(x: Any) -> Any:
    """The mean square and the squared mean read apart: ``(x - mean^2) * mean(x^2)``."""
    mean = ng.tensor_reduce(x, op="mean")
    mean_square = ng.tensor_reduce(ng.activation(x, op="square"), op="mean")
    return ng.tensor_scalar(
        ng.tensor_scalar(x, ng.activation(mean, op="square"), op="subtract"), mean_square, op="multiply"
    )


def means_numpy(x: np.ndarray) -> np.ndarray:
    return (x - x.mean(axis=1, keepdims=True) ** 2) * (x**2).mean(axis=1, keepdims=True)


def _groups(program: ng.Program) -> list[Moments]:
    order = list(program.ids)
    return list(plan_moments(program, order, plan_fusions(program, order)).values())


def test_each_row_tile_of_a_layer_norm_is_one_group_with_every_role() -> None:
    program = ng.saturate(ng.tile(layernorm, {"x": (200, 1100), "g": (1, 1100), "b": (1, 1100)}))
    groups = _groups(program)
    assert [g.data.slices for g in groups] == [((0, 128), (0, 1100)), ((0, 72), (0, 1100))]
    for group in groups:
        roles = {role for role, _ in group.roles}
        assert {"mean", "mean_square", "mean_squared", "variance"} <= roles
        assert group.count == 1100
        assert program[group.square].op.name == "activation"


def test_rms_norm_and_squares_read_elsewhere_form_no_group() -> None:
    def rms(x: Any) -> Any:
        return ng.tensor_scalar(x, ng.tensor_reduce(ng.activation(x, op="square"), op="mean"))

    def squares_kept(x: Any) -> Any:
        squares = ng.activation(x, op="square")
        total = ng.tensor_reduce(ng.tensor_reduce(squares, op="sum"), op="sum")
        return ng.tensor_scalar(ng.tensor_scalar(squares, total), ng.tensor_reduce(x, op="sum"))

    def other_rows(x: Any, y: Any) -> Any:
        return ng.tensor_scalar(
            ng.tensor_scalar(x, ng.tensor_reduce(x, op="sum")),
            ng.tensor_reduce(ng.activation(y, op="square"), op="sum"),
        )

    assert _groups(ng.saturate(ng.tile(rms, {"x": (128, 256)}))) == []
    assert _groups(ng.saturate(ng.tile(squares_kept, {"x": (128, 256)}))) == []
    assert _groups(ng.saturate(ng.tile(other_rows, {"x": (128, 256), "y": (128, 256)}))) == []


def test_chunks_of_a_row_are_512_wide_the_last_one_less() -> None:
    assert chunks(1100) == [(0, 512), (512, 1024), (1024, 1100)]
    assert chunks(512) == [(0, 512)]
    assert chunks(3) == [(0, 3)]


def test_the_vector_pass_is_taken_where_the_engine_model_ends_it_first() -> None:
    program = ng.saturate(ng.tile(layernorm, {"x": (128, 4096), "g": (1, 4096), "b": (1, 4096)}))
    (group,) = _groups(program)
    idle = EngineLoads(TRN2_TIMING, "finish")
    # bn_stats: 8 x 0.64 us + bn_aggr on the Vector Engine, 5.3 us; the two sums side by
    # side on the Vector and Scalar Engines end sooner (4.4 us, 3.6 us)
    assert not prefers_moments(idle, group, 1)
    busy_scalar = EngineLoads(TRN2_TIMING, "finish")
    busy_scalar.run(SCALAR, 8192, 1, [], 99)  # 7 us of Scalar work queued
    assert prefers_moments(busy_scalar, group, 1)
    assert busy_scalar.busy[VECTOR] == 0.0  # pricing the two ways queues nothing
    fixed = EngineLoads(TRN2_TIMING, "fixed")
    fixed.run(SCALAR, 8192, 1, [], 99)
    assert not prefers_moments(fixed, group, 1)


def test_plain_emit_keeps_the_statements_own_instructions() -> None:
    program = ng.saturate(ng.tile(layernorm, {"x": (256, 1024), "g": (1, 1024), "b": (1, 1024)}))
    text = ng.emit(program, backend="nki")
    assert "bn_stats" not in text and "nisa.tensor_reduce(" in text


def _kernel(program: ng.Program) -> str:
    """The kernel lowered with the ``finish`` engine policy (the groups' choice is the
    engine model's; ``emit`` may keep its default lowering when no other is clearly faster)."""
    kb = lower_program(program, TRN2, kernel_types(program, None), LOWERINGS, engine_policy="finish")
    returns = tuple(kb.hbm[var].name for var in program.returns)
    return render_kernel(KernelText("kernel", tuple(kb.params), returns, ""), kb.groups)


def _simulate(func: Any, shapes: dict[str, tuple[int, int]], dtype: np.dtype, seed: int) -> tuple[str, Any]:
    program = ng.saturate(ng.tile(func, shapes, dtype=dtype))
    text = _kernel(program)
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes.values()]
    out = np.asarray(ng.nki_sim.simulate(text, *arrays), dtype=np.float64)
    return text, (out, [a.astype(np.float64) for a in arrays])


@pytest.fixture
def always_moments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every group takes ``bn_stats`` / ``bn_aggr`` (what the engine model would choose
    where the Scalar Engine is busy), so the numbers below come from them."""
    monkeypatch.setattr(moments, "prefers_moments", lambda loads, group, data: True)


@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # the fixture only patches a function
)
@given(r=st.integers(1, 260), c=st.integers(2, 1300), bf16=st.booleans(), seed=st.integers(0, 9))
def test_layer_norm_with_bn_stats_at_random_shapes_equals_numpy(
    always_moments: None, r: int, c: int, bf16: bool, seed: int
) -> None:
    dtype = BF16 if bf16 else np.dtype(np.float32)
    text, (out, (x, g, b)) = _simulate(layernorm, {"x": (r, c), "g": (1, c), "b": (1, c)}, dtype, seed)
    assert text.count("nisa.bn_aggr(") == -(-r // 128)
    assert text.count("nisa.bn_stats(") == -(-r // 128) * -(-c // 512)
    exact = layernorm_numpy(x, g, b)
    tolerance = 3e-2 if bf16 else 2e-5
    np.testing.assert_allclose(out, exact, rtol=tolerance, atol=tolerance * max(1.0, np.abs(exact).max()))


@pytest.mark.parametrize(("func", "reference"), [(sums, sums_numpy), (means, means_numpy)])
def test_results_read_outside_the_group_are_derived_from_mean_and_variance(
    always_moments: None, func: Any, reference: Any
) -> None:
    text, (out, (x,)) = _simulate(func, {"x": (200, 700)}, np.dtype(np.float32), 1)
    assert "nisa.bn_aggr(" in text and "nisa.tensor_reduce(" not in text
    exact = reference(x)
    np.testing.assert_allclose(out, exact, rtol=1e-4, atol=1e-4 * np.abs(exact).max())


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_a_row_sum_on_the_scalar_engine_equals_numpy(monkeypatch: pytest.MonkeyPatch, op: str) -> None:
    from nkigym_graph_plugins.nki_backend import lowering

    monkeypatch.setattr(lowering, "_sums_on_scalar", lambda kb, stmt, data: True)

    def centred(x: Any) -> Any:
        return ng.tensor_scalar(x, ng.tensor_reduce(x, op=op), op="subtract")

    text, (out, (x,)) = _simulate(centred, {"x": (150, 333)}, np.dtype(np.float32), 2)
    assert "op=nl.copy" in text and "nisa.tensor_reduce(" not in text
    reduce = np.sum if op == "sum" else np.mean
    np.testing.assert_allclose(out, x - reduce(x, axis=1, keepdims=True), rtol=1e-5, atol=1e-4)
