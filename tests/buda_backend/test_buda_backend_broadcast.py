"""Buda netlists of the broadcasting ops, activation scale/bias, gelu/silu and mean: every
netlist passes the checker and evaluates to what numpy computes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import nkigym_graph as ng
from nkigym_graph_plugins.buda_backend import BudaEmitError, run_netlist


def _evaluate(
    func: Any, shapes: dict[str, tuple[int, int]], arch: str = "wormhole_b0", saturate: bool = True
):
    program = ng.tile(func, shapes, target=arch)
    if saturate:
        program = ng.saturate(program)
    artifact = ng.emit_artifact(program, backend="buda", arch=arch)
    assert ng.check_netlist(artifact.text) == []
    arrays = {name: np.random.default_rng(3).uniform(0.5, 2.0, shape) for name, shape in shapes.items()}
    (out,) = run_netlist(artifact, {k: v.astype(np.float32) for k, v in arrays.items()}).values()
    return artifact, out, arrays


def centre_and_scale(x: Any, g: Any) -> Any:
    centred = ng.tensor_tensor(x, ng.tensor_reduce(x, op="mean"), op="subtract")
    return ng.tensor_tensor(centred, g, op="multiply")


@pytest.mark.parametrize("saturate", [False, True])
@pytest.mark.parametrize("shape", [(64, 96), (100, 70)])
def test_column_and_row_operands_spread_by_tile_broadcast(shape: tuple[int, int], saturate: bool) -> None:
    cols = shape[1]
    artifact, out, a = _evaluate(centre_and_scale, {"x": shape, "g": (1, cols)}, saturate=saturate)
    expected = (a["x"] - a["x"].mean(axis=1, keepdims=True)) * a["g"]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    assert "tile_broadcast: c" in artifact.text and "tile_broadcast: r" in artifact.text


@pytest.mark.parametrize("saturate", [False, True])
@pytest.mark.parametrize("shape", [(1, 5), (4, 20), (4, 32), (20, 4), (40, 32)])
def test_statistics_of_rows_within_one_tile_are_spread(shape: tuple[int, int], saturate: bool) -> None:
    """A row statistic whose row fits in one 32-wide tile is a [R, 1] column inside the
    tile that reads it: the reader must still spread it along the row (it is not fused
    into that reader, whose intermediates carry no TMs)."""

    def scale_by_row_sum(x: Any, g: Any) -> Any:
        return ng.tensor_tensor(centre_and_scale(x, g), ng.tensor_reduce(x, op="sum"), op="multiply")

    _, out, a = _evaluate(scale_by_row_sum, {"x": shape, "g": (1, shape[1])}, saturate=saturate)
    x = a["x"]
    expected = (x - x.mean(axis=1, keepdims=True)) * a["g"] * x.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn", ["gelu", "silu", "exp", "rsqrt"])
def test_activation_scale_bias_and_functions(fn: str) -> None:
    def f(x: Any, b: Any) -> Any:
        return ng.tensor_tensor(
            ng.activation(x, op=fn, scale=0.5, bias=0.25), ng.activation(x, op=fn, bias=b), op="add"
        )

    _, out, a = _evaluate(f, {"x": (64, 64), "b": (64, 1)})
    tanh_gelu = lambda y: 0.5 * y * (1 + np.tanh(math.sqrt(2 / math.pi) * (y + 0.044715 * y**3)))  # noqa: E731
    functions = {
        "gelu": tanh_gelu,
        "silu": lambda y: y / (1 + np.exp(-y)),
        "exp": np.exp,
        "rsqrt": lambda y: y**-0.5,
    }
    expected = functions[fn](0.5 * a["x"] + 0.25) + functions[fn](a["x"] + a["b"])
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_gelu_is_budas_tanh_approximation() -> None:
    """Buda's gelu (its golden model) is the tanh form: within 1e-3 of the exact (erf) gelu."""

    def f(x: Any) -> Any:
        return ng.activation(x, op="gelu")

    _, out, a = _evaluate(f, {"x": (32, 64)})
    exact = 0.5 * a["x"] * (1 + np.vectorize(math.erf)(a["x"] / math.sqrt(2)))
    np.testing.assert_allclose(out, exact, atol=1e-3)


def test_mean_is_a_row_sum_times_the_reciprocal_count() -> None:
    def f(x: Any) -> Any:
        return ng.tensor_reduce(x, op="mean")

    _, out, a = _evaluate(f, {"x": (96, 160)})
    np.testing.assert_allclose(out, a["x"].mean(axis=1, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_or_min_over_one_column_is_the_column(op: str) -> None:
    """A row maximum of a [R, 1] column (one value per row) is that column (a copy, no
    reduce or mask)."""

    def f(x: Any) -> Any:
        return ng.tensor_tensor(x, ng.tensor_reduce(ng.tensor_reduce(x, op="sum"), op=op), op="subtract")

    _, out, a = _evaluate(f, {"x": (64, 64)})
    np.testing.assert_allclose(out, a["x"] - a["x"].sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("function", "shapes"),
    [
        (lambda x: ng.tensor_reduce(ng.activation(x, op="log"), op="sum"), {"x": (32, 33)}),
        (lambda x: ng.tensor_reduce(ng.activation(x, op="sqrt", bias=-0.25), op="mean"), {"x": (32, 150)}),
        (lambda a, b: ng.nc_matmul(ng.activation(a, op="log"), b), {"a": (33, 64), "b": (33, 64)}),
    ],
)
def test_a_sum_over_padding_an_op_made_non_finite_is_refused(function: Any, shapes: dict) -> None:
    """The netlist sums rows and contracts K as matmuls that multiply the tile padding by
    zeros; a log or shifted sqrt makes the padding -inf or nan, and the netlist gave nan
    where the program is finite (its checker clean). Such a sum is refused, naming it."""
    with pytest.raises(BudaEmitError, match="would add the tile padding, where an op made"):
        ng.emit_artifact(ng.tile(function, shapes, target="wormhole_b0"), backend="buda")


@pytest.mark.parametrize(
    ("dtype", "arch", "bias"),
    [("float32", "wormhole_b0", 100.0), ("float16", "wormhole_b0", 12.0), ("float32", "grayskull", 100.0)],
)
@pytest.mark.parametrize("contract", ["row sum", "matmul"])
def test_padding_an_op_makes_too_large_for_the_data_format_is_refused(
    dtype: str, arch: str, bias: float, contract: str
) -> None:
    """``exp(x + bias)`` is finite in float64 on the zero padding (exp(100), exp(12)) but
    inf in the netlist's data format (Float32, Float16, Grayskull's Float16_b), so the
    sum over the padding was nan in every real output of a netlist the checker passed,
    where the program (x near -bias) is finite."""

    def summed(x: Any) -> Any:
        return ng.tensor_reduce(ng.activation(x, op="exp", bias=bias), op="sum")

    def multiplied(x: Any, w: Any) -> Any:
        return ng.nc_matmul(ng.activation(x, op="exp", bias=bias), w)

    function, shapes = (
        (summed, {"x": (40, 70)}) if contract == "row sum" else (multiplied, {"x": (40, 70), "w": (40, 30)})
    )
    program = ng.tile(function, shapes, dtype=dtype, target=arch)
    with pytest.raises(BudaEmitError, match="would add the tile padding, where an op made inf"):
        ng.emit_artifact(program, backend="buda")


def test_padding_that_the_data_format_holds_still_emits() -> None:
    def f(x: Any) -> Any:
        return ng.tensor_reduce(ng.activation(x, op="exp", bias=10.0), op="sum")

    _, out, a = _evaluate(f, {"x": (40, 70)})
    np.testing.assert_allclose(out, np.exp(a["x"] + 10.0).sum(axis=1, keepdims=True), rtol=1e-5)


def test_a_log_of_whole_tiles_and_of_a_spread_statistic_still_emits() -> None:
    def log_sum_exp_shift(x: Any) -> Any:
        total = ng.activation(ng.tensor_reduce(ng.activation(x, op="exp"), op="sum"), op="log")
        return ng.tensor_scalar(ng.activation(x, op="log"), total, op="subtract")

    _, out, a = _evaluate(log_sum_exp_shift, {"x": (64, 64)})
    expected = np.log(a["x"]) - np.log(np.exp(a["x"]).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
