"""Row statistics (``[P, 1]`` columns: sums, maxima, scales) in a scheduled kernel are held
in fp32 streams of their own (``<op>.stat``), as the engines compute them and as the
unscheduled kernel holds them, whatever the program's working dtype."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import nkigym_graph as ng
from nkigym_graph.nki_sim import simulate
from nkigym_graph.scheduling.allocate import is_statistic, tile_dtypes

EPS = 1e-5


def rmsnorm_matmul(x, w):
    scale = ng.activation(ng.tensor_reduce(ng.activation(x, op="square"), op="mean"), op="rsqrt", bias=EPS)
    return ng.nc_matmul(ng.nc_transpose(ng.tensor_scalar(x, scale)), w)


def reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return (x / np.sqrt((x**2).mean(axis=1, keepdims=True) + EPS)) @ w


def _program(dtype: str) -> ng.Program:
    return ng.saturate(ng.tile(rmsnorm_matmul, {"x": (256, 1024), "w": (1024, 512)}, dtype=dtype))


def _error(program: ng.Program) -> float:
    rng = np.random.default_rng(5)
    storage = ml_dtypes.bfloat16 if program.output_dtype == "bfloat16" else np.float32
    x, w = (rng.standard_normal(p.shape).astype(storage) for p in program.params)
    out = simulate(ng.emit(program, backend="nki"), x, w)
    want = reference(x.astype(np.float64), w.astype(np.float64))
    return float(np.abs(np.asarray(out, np.float64) - want).max() / np.abs(want).max())


@pytest.mark.parametrize("schedule", ["order=M,N,K", "order=M,N,K ahead=M", "order=N,M,K"])
def test_row_statistics_live_in_fp32_streams_of_their_own(schedule: str) -> None:
    plan = ng.kernel_plan(_program("bfloat16").with_schedule(schedule))
    kernel = plan.program
    held = {var: slot.stream for step in plan.steps for var, slot in step.slots}
    statistics = {var for var in held if is_statistic(kernel.variables[var].shape)}
    assert statistics  # the row sums and scales
    for var, stream in held.items():
        in_psum_or_loaded = stream.startswith(("psum", "load."))
        if var in statistics and not in_psum_or_loaded:
            assert stream.endswith(".stat") and plan.streams[stream].dtype == "float32", (var, stream)
        elif stream.endswith(".stat"):
            raise AssertionError(f"{var} {kernel.variables[var].shape} is in statistics stream {stream}")
    dtype_of = tile_dtypes(kernel)
    assert {dtype_of(var) for var in statistics if not held[var].startswith("psum")} == {"float32"}


def test_a_scheduled_bf16_kernel_is_as_exact_as_the_unscheduled_one() -> None:
    program = _program("bfloat16")
    unscheduled = _error(program)
    scheduled = _error(program.with_schedule("order=M,N,K ahead=M"))
    assert scheduled < 2e-2
    assert scheduled <= 1.25 * unscheduled, (scheduled, unscheduled)
