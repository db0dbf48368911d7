"""The programs the Buda backend tests emit, with their parameter shapes and inputs.

``layernorm_like`` spreads a ``[P, 1]`` row statistic over the row by hand, with
``nc_matmul(nc_transpose(v), ones)`` (``ones`` is a ``[1, F]`` parameter of ones); the
broadcasting forms (``tensor_scalar(x, column)``) are tested in
``test_buda_backend_broadcast``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import nkigym_graph as ng
from nkigym_graph.ir.targets import Target

EPS = 1e-5


def matmul(a: Any, b: Any) -> Any:
    return ng.nc_matmul(a, b)


def matmul_bias_relu(a: Any, b: Any, bias: Any) -> Any:
    return ng.activation(ng.tensor_tensor(ng.nc_matmul(a, b), bias, op="add"), op="relu")


def _row_mean(x: Any, width: int) -> Any:
    return ng.tensor_scalar(ng.tensor_reduce(x, op="sum"), 1.0 / width, op="multiply")


def _spread(column: Any, ones: Any) -> Any:
    """A ``[P, 1]`` column repeated along the row (``column @ ones``)."""
    return ng.nc_matmul(ng.nc_transpose(column), ones)


def layernorm_like(x: Any, ones: Any) -> Any:
    width = x.shape[1]
    centred = ng.tensor_tensor(x, _spread(_row_mean(x, width), ones), op="subtract")
    variance = _row_mean(ng.activation(centred, op="square"), width)
    rstd = ng.activation(ng.tensor_scalar(variance, EPS, op="add"), op="rsqrt")
    return ng.tensor_tensor(centred, _spread(rstd, ones), op="multiply")


def double_matmul(a: Any, b: Any, c: Any) -> Any:
    """``(a.T @ b) @ c``: the first result is the second matmul's stationary operand."""
    return ng.nc_matmul(ng.nc_transpose(ng.nc_matmul(a, b)), c)


def double_matmul_moving(a: Any, b: Any, c: Any) -> Any:
    """``a.T @ (b.T @ c)``: the first result is the second matmul's moving operand."""
    return ng.nc_matmul(a, ng.nc_matmul(b, c))


def double_matmul_stationary(a: Any, b: Any, c: Any) -> Any:
    """``(a.T @ b).T @ c``: the first result is read transposed (a transpose TM)."""
    return ng.nc_matmul(ng.nc_matmul(a, b), c)


class Case(NamedTuple):
    function: Callable[..., Any]
    shapes: dict[str, tuple[int, int]]

    def program(self, target: Target) -> ng.Program:
        return ng.tile(self.function, self.shapes, target=target)

    def inputs(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        arrays = {name: rng.standard_normal(shape) for name, shape in self.shapes.items()}
        if "ones" in arrays:
            arrays["ones"] = np.ones(self.shapes["ones"])
        return arrays


CASES = {
    "matmul": Case(matmul, {"a": (128, 64), "b": (128, 96)}),
    "matmul_bias_relu": Case(matmul_bias_relu, {"a": (128, 64), "b": (128, 96), "bias": (64, 96)}),
    "layernorm_like": Case(layernorm_like, {"x": (64, 128), "ones": (1, 128)}),
    "double_matmul": Case(double_matmul, {"a": (128, 64), "b": (128, 64), "c": (64, 96)}),
}
"""The four programs every architecture must emit."""

MORE_CASES = {
    "double_matmul_moving": Case(double_matmul_moving, {"a": (96, 64), "b": (64, 96), "c": (64, 64)}),
    "double_matmul_moving_fused": Case(double_matmul_moving, {"a": (32, 96), "b": (64, 32), "c": (64, 64)}),
    "double_matmul_stationary": Case(double_matmul_stationary, {"a": (64, 64), "b": (64, 96), "c": (64, 32)}),
    "layernorm_wide": Case(layernorm_like, {"x": (256, 256), "ones": (1, 256)}),
    "layernorm_ragged": Case(layernorm_like, {"x": (48, 40), "ones": (1, 40)}),
}
"""Other operand roles and shapes (wider than dest, not whole tiles)."""


NETLIST_RTOL = {"Float32": 1e-5, "Float16": 2.0**-9, "Float16_b": 2.0**-6}
"""What a netlist's data format keeps, relative to the largest output: the evaluator rounds
every queue, op output and intermediate to it (Float16_b: bfloat16, 8 significant bits,
rounded a few times along a chain)."""


def assert_matches_program(got: np.ndarray, expected: np.ndarray, artifact: ng.Artifact) -> None:
    """The netlist's evaluation against the program's interpretation (float64), within its
    data formats' precision (:data:`NETLIST_RTOL`), relative to the largest output."""
    formats = {queue["df"] for queue in artifact.parsed["queues"].values()}
    rtol = max(NETLIST_RTOL.get(df, 1e-5) for df in formats)
    scale = max(float(np.abs(expected).max()), 1.0)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale)
