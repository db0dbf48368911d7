"""Every workload of ``examples/workloads.py`` end to end at a small size: tile -> search
-> emit NKI -> simulate equals numpy (fp32 and bf16 tolerances); tile for Wormhole ->
emit Buda -> the checker is clean -> the netlist evaluates to numpy (causal attention:
the Buda backend refuses its mask, naming why)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from support import example_workloads

import nkigym_graph as ng
from nkigym_graph_plugins.buda_backend import run_netlist

_workloads = example_workloads()
WORKLOADS, Workload, gelu_reference = _workloads.WORKLOADS, _workloads.Workload, _workloads.gelu_reference

BF16 = np.dtype(ml_dtypes.bfloat16)
NAMES = sorted(WORKLOADS)


def _relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    return float(np.abs(got.astype(np.float64) - expected).max() / max(1e-30, np.abs(expected).max()))


def _searched(workload: Workload, dtype: str, online: bool = False) -> ng.Program:
    program = ng.tile(workload.func, workload.small, dtype=dtype, online=online)
    result = ng.search(program, strategy="greedy", budget=12, seed=0, confirm=False)
    assert ng.replay(program, result.path) == result.best
    return result.best


@pytest.mark.parametrize("name", NAMES)
def test_nki_kernel_equals_numpy_float32(name: str) -> None:
    workload = WORKLOADS[name]
    best = _searched(workload, "float32")
    arrays = workload.inputs(workload.small)
    kernel = ng.emit(best, backend="nki")
    out = ng.nki_sim.simulate(kernel, *(a.astype(np.float32) for a in arrays.values()))
    assert _relative_error(out, workload.reference(*arrays.values())) < 2e-5


@pytest.mark.parametrize("name", NAMES)
def test_nki_kernel_equals_numpy_bfloat16(name: str) -> None:
    """bf16 inputs and output, fp32 accumulation: within bf16's precision of numpy on the
    same (rounded) inputs."""
    workload = WORKLOADS[name]
    best = _searched(workload, "bfloat16")
    arrays = {k: v.astype(BF16) for k, v in workload.inputs(workload.small).items()}
    out = ng.nki_sim.simulate(ng.emit(best, backend="nki"), *arrays.values())
    assert out.dtype == BF16
    expected = workload.reference(*(a.astype(np.float64) for a in arrays.values()))
    assert _relative_error(out, expected) < 2e-2


@pytest.mark.parametrize("name", ["softmax", "attention", "causal_attention"])
def test_online_tiling_equals_numpy(name: str) -> None:
    workload = WORKLOADS[name]
    best = _searched(workload, "float32", online=True)
    arrays = workload.inputs(workload.small)
    out = ng.nki_sim.simulate(ng.emit(best, backend="nki"), *(a.astype(np.float32) for a in arrays.values()))
    assert _relative_error(out, workload.reference(*arrays.values())) < 2e-5


def _tanh_gelu_mlp(x_t: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    h = x_t.T @ w1 + b1.T
    return 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3))) @ w2


@pytest.mark.parametrize("name", [name for name in NAMES if WORKLOADS[name].buda is not None])
def test_buda_netlist_is_clean_and_equals_numpy(name: str) -> None:
    workload = WORKLOADS[name]
    assert workload.buda is not None
    program = ng.saturate(ng.tile(workload.func, workload.buda, target="wormhole_b0"))
    artifact = ng.emit_artifact(program, backend="buda", arch="wormhole_b0")
    assert ng.check_netlist(artifact.text) == []
    arrays = workload.inputs(workload.buda)
    (out,) = run_netlist(artifact, {k: v.astype(np.float32) for k, v in arrays.items()}).values()
    if name == "mlp":  # Buda's gelu is the tanh approximation (its golden model)
        assert _relative_error(out, _tanh_gelu_mlp(*arrays.values())) < 1e-5
        assert _relative_error(out, workload.reference(*arrays.values())) < 1e-3
    else:
        assert _relative_error(out, workload.reference(*arrays.values())) < 1e-5


def test_buda_refuses_the_causal_mask_naming_why() -> None:
    workload = WORKLOADS["causal_attention"]
    shapes = {"q_t": (64, 96), "k_t": (64, 128), "v": (128, 64)}
    program = ng.saturate(ng.tile(workload.func, shapes, target="wormhole_b0"))
    with pytest.raises(
        ng.NkigymError, match=r"affine_select.*no Buda op computes a value from an element's position"
    ):
        ng.emit_artifact(program, backend="buda", arch="wormhole_b0")


def test_gelu_reference_is_the_tanh_form_near_the_erf_form() -> None:
    x = np.array([-2.0, 0.0, 1.5])
    tanh_form = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    erf_form = x * 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))
    assert np.allclose(gelu_reference(x), tanh_form)
    assert np.abs(gelu_reference(x) - erf_form).max() < 1e-3
