"""Programs the NKI backend tests emit, and the check every numeric test makes:
simulate the emitted kernel and compare it with ``interpret`` on random inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import nkigym_graph as ng
from nkigym_graph.nki_sim import SimulationReport, simulate
from nkigym_graph.plugin.protocols import Artifact

TRANSFORMS = ["data_reuse", "operand_merge", "free_dim_merge", "dead_code"]
RTOL = 1e-4
ATOL_SCALE = 2e-5
"""Absolute tolerance per unit of the result's largest magnitude (fp32 sums of many terms)."""


def matmul(a: Any, b: Any) -> Any:
    return ng.nc_matmul(a, b)


def double_matmul(a: Any, b: Any, c: Any) -> Any:
    return ng.nc_matmul(ng.nc_matmul(a, b), c)


def matmul_tanh(a: Any, b: Any) -> Any:
    return ng.activation(ng.nc_matmul(a, b), op="tanh")


def matmul_bias(a: Any, b: Any, bias: Any) -> Any:
    return ng.tensor_tensor(ng.nc_matmul(a, b), bias, op="add")


def transpose(x: Any) -> Any:
    return ng.nc_transpose(x)


def scaled_transpose(x: Any) -> Any:
    return ng.tensor_scalar(ng.nc_transpose(x), 0.5, op="multiply")


def shifted(x: Any) -> Any:
    return ng.tensor_scalar(x, 3, op="subtract")


def row_sum(x: Any) -> Any:
    return ng.tensor_reduce(x, op="sum")


def row_max(x: Any) -> Any:
    return ng.tensor_reduce(x, op="max")


class Case(NamedTuple):
    id: str
    func: Callable[..., Any]
    shapes: dict[str, tuple[int, int]]


# (M, K, N) with 1 to 4 tiles of 128 per axis, ragged last tiles, K = 1000 (the tiling tests' matrix).
MATMUL_SIZES = [
    (128, 128, 128),
    (200, 256, 384),
    (512, 100, 200),
    (384, 512, 512),
    (64, 384, 130),
    (256, 1000, 96),
    (1000, 200, 128),
]

CASES = [Case(f"matmul_{m}x{k}x{n}", matmul, {"a": (k, m), "b": (k, n)}) for m, k, n in MATMUL_SIZES] + [
    Case("double_matmul", double_matmul, {"a": (256, 200), "b": (256, 130), "c": (200, 300)}),
    Case("matmul_tanh_k1000", matmul_tanh, {"a": (1000, 128), "b": (1000, 64)}),
    Case("matmul_tanh", matmul_tanh, {"a": (256, 200), "b": (256, 384)}),
    Case("matmul_bias", matmul_bias, {"a": (300, 200), "b": (300, 256), "bias": (200, 256)}),
    Case("transpose", transpose, {"x": (200, 300)}),
    Case("scaled_transpose", scaled_transpose, {"x": (200, 130)}),
    Case("tensor_scalar", shifted, {"x": (300, 100)}),
    Case("row_sum", row_sum, {"x": (200, 300)}),
    Case("row_max", row_max, {"x": (200, 300)}),
]


def tiled(case: Case, dtype: Any = np.float32, saturate: bool = False) -> ng.Program:
    """The case tiled (and saturated with every merge transform when asked)."""
    program = ng.tile(case.func, case.shapes, dtype=dtype)
    return ng.saturate(program, TRANSFORMS) if saturate else program


def inputs(program: ng.Program, rng: np.random.Generator, dtype: Any = np.float32) -> dict[str, np.ndarray]:
    """Random inputs by parameter name, in ``dtype``."""
    return {p.name: rng.standard_normal(p.shape).astype(dtype) for p in program.params}


def run(
    program: ng.Program, arrays: dict[str, np.ndarray], **options: Any
) -> tuple[Artifact, Any, SimulationReport]:
    """Emit ``program``, simulate the kernel on ``arrays``; the artifact, output and report."""
    artifact = ng.emit_artifact(program, backend="nki", **options)
    names = [p.name for p in program.params]
    out, report = simulate(artifact.text, *(arrays[n] for n in names), report=True)
    return artifact, out, report


def check(program: ng.Program, rng: np.random.Generator, **options: Any) -> tuple[Artifact, SimulationReport]:
    """The simulated kernel equals ``interpret`` (float32 tolerance); artifact and report."""
    arrays = inputs(program, rng)
    artifact, out, report = run(program, arrays, **options)
    expected = ng.interpret(program, **arrays)
    assert out.shape == expected.shape
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL_SCALE * scale)
    return artifact, report


def wide_matmul(m: int, k: int, n: int, n_tile: int = 512) -> ng.Program:
    """What saturation makes of a large matmul: one wide load per K chunk of each operand
    (``a[k0:k1, 0:m]``, ``b[k0:k1, 0:n]``) at the top, then per output tile (128 x
    ``n_tile``) its K accumulation and store."""
    from nkigym_graph.ir.ops import ALLOC, LOAD, NC_MATMUL, STORE
    from nkigym_graph.ir.statement import Operand, Statement, make_attrs

    chunks = [(k0, min(k0 + 128, k)) for k0 in range(0, k, 128)]
    stmts = [Statement(ALLOC, (Operand("output", ((0, m), (0, n))),), make_attrs(dtype="float32"))]
    for i, (k0, k1) in enumerate(chunks):
        stmts.append(
            Statement(LOAD, (Operand("a", ((k0, k1), (0, m))), Operand(f"a_{i}", ((0, k1 - k0), (0, m)))))
        )
        stmts.append(
            Statement(LOAD, (Operand("b", ((k0, k1), (0, n))), Operand(f"b_{i}", ((0, k1 - k0), (0, n)))))
        )
    for m0 in range(0, m, 128):
        for n0 in range(0, n, n_tile):
            rows, cols = min(128, m - m0), min(n_tile, n - n0)
            acc = f"acc_{m0}_{n0}"
            for i, (k0, k1) in enumerate(chunks):
                lhs = Operand(f"a_{i}", ((0, k1 - k0), (m0, m0 + rows)))
                rhs = Operand(f"b_{i}", ((0, k1 - k0), (n0, n0 + cols)))
                dst = Operand(acc, ((0, rows), (0, cols)))
                stmts.append(Statement(NC_MATMUL, (lhs, rhs, dst), (), i > 0))
            out = Operand("output", ((m0, m0 + rows), (n0, n0 + cols)))
            stmts.append(Statement(STORE, (Operand(acc, ((0, rows), (0, cols))), out)))
    params = [ng.Param("a", (k, m), "float32"), ng.Param("b", (k, n), "float32")]
    return ng.Program("wide_matmul", params, stmts, "output")
