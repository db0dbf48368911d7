"""The workloads beyond matmul, written with nkigym ops, each with a numpy reference.

Every function runs eagerly on numpy arrays and tiles with ``nkigym.tile``. Layouts
follow ``nc_matmul(a, b) = a.T @ b``: a matmul's left operand is given transposed.

    python examples/workloads.py   # checks every function against its numpy reference

``WORKLOADS`` lists them with their named sizes (the benchmark's) and small sizes (the
tests'); ``examples/softmax.py``, ``normalization.py``, ``rmsnorm_matmul.py``,
``mlp.py`` and ``attention.py`` run each end to end (``attention.py --causal``: the
causal mask).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import nkigym_graph as nkigym

EPS = 1e-5
"""The normalisations' epsilon."""

Shapes = dict[str, tuple[int, int]]


# -- softmax ---------------------------------------------------------------------------
def softmax(x):
    """Softmax of every row of ``x`` [R, F]: exp(x - max) / sum, the sum's reciprocal multiplied."""
    m = nkigym.tensor_reduce(x, op="max")
    e = nkigym.activation(x, op="exp", bias=nkigym.tensor_scalar(m, -1.0, op="multiply"))
    return nkigym.tensor_scalar(e, nkigym.activation(nkigym.tensor_reduce(e, op="sum"), op="reciprocal"))


def softmax_reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# -- layer norm and RMS norm -----------------------------------------------------------
def layernorm(x, gamma, beta):
    """Layer norm of every row of ``x`` [R, F], with ``gamma`` and ``beta`` rows [1, F]. The
    variance is mean(x^2) - mean^2, so both row statistics read ``x`` side by side (on two
    engines) and the row is normalised in one pass, (x - mean) * rstd."""
    mean = nkigym.tensor_reduce(x, op="mean")
    mean_square = nkigym.tensor_reduce(nkigym.activation(x, op="square"), op="mean")
    variance = nkigym.tensor_tensor(mean_square, nkigym.activation(mean, op="square"), op="subtract")
    rstd = nkigym.activation(variance, op="rsqrt", bias=EPS)
    normed = nkigym.tensor_scalar(nkigym.tensor_scalar(x, mean, op="subtract"), rstd, op="multiply")
    return nkigym.tensor_tensor(nkigym.tensor_tensor(normed, gamma, op="multiply"), beta, op="add")


def layernorm_reference(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    centred = x - x.mean(axis=1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=1, keepdims=True) + EPS) * gamma + beta


def rmsnorm(x, gamma):
    """RMS norm of every row of ``x`` [R, F], with ``gamma`` [1, F]."""
    scale = nkigym.activation(
        nkigym.tensor_reduce(nkigym.activation(x, op="square"), op="mean"), op="rsqrt", bias=EPS
    )
    return nkigym.tensor_tensor(nkigym.tensor_scalar(x, scale), gamma, op="multiply")


def rmsnorm_reference(x: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x**2).mean(axis=1, keepdims=True) + EPS) * gamma


# -- RMS norm + matmul -------------------------------------------------------------------
def rmsnorm_matmul(x, w):
    """``rmsnorm(x) @ w`` for ``x`` [M, K] and ``w`` [K, N], as written: the matmul reads
    the normalised ``x`` transposed on chip. Tiled and saturated, ``scale_after_matmul``
    moves the row scale past the matmul (``diag(s) (x @ w)``), so the transposes read
    ``x`` as loaded."""
    scale = nkigym.activation(
        nkigym.tensor_reduce(nkigym.activation(x, op="square"), op="mean"), op="rsqrt", bias=EPS
    )
    return nkigym.nc_matmul(nkigym.nc_transpose(nkigym.tensor_scalar(x, scale)), w)


def rmsnorm_matmul_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return (x / np.sqrt((x**2).mean(axis=1, keepdims=True) + EPS)) @ w


# -- MLP -------------------------------------------------------------------------------
def mlp(x_t, w1, b1, w2):
    """``gelu(x @ w1 + b1) @ w2`` for ``x_t`` = x.T [D, T], ``w1`` [D, H], ``b1`` [H, 1],
    ``w2`` [H, D]: the hidden layer is computed transposed ([H, T]) so that its bias is a
    column and it is the second matmul's left operand as it stands."""
    hidden = nkigym.activation(nkigym.nc_matmul(w1, x_t), op="gelu", bias=b1)
    return nkigym.nc_matmul(hidden, w2)


def gelu_reference(x: np.ndarray) -> np.ndarray:
    """GELU in the tanh form both backends compute (``nkigym.activation(op="gelu")``)."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def mlp_reference(x_t: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    return gelu_reference(x_t.T @ w1 + b1.T) @ w2


# -- attention -------------------------------------------------------------------------
def attention(q_t, k_t, v):
    """``softmax(q @ k.T / sqrt(d)) @ v`` for one head: ``q_t`` = q.T and ``k_t`` = k.T
    [d, S], ``v`` [S, d]. The scale folds into the exponential (``exp(s/sqrt(d) - m/sqrt(d))``)
    and the row sum's reciprocal multiplies the product."""
    scale = 1.0 / math.sqrt(q_t.shape[0])
    scores = nkigym.nc_matmul(q_t, k_t)
    shift = nkigym.tensor_scalar(nkigym.tensor_reduce(scores, op="max"), -scale, op="multiply")
    weights = nkigym.activation(scores, op="exp", scale=scale, bias=shift)
    total = nkigym.activation(nkigym.tensor_reduce(weights, op="sum"), op="reciprocal")
    return nkigym.tensor_scalar(nkigym.nc_matmul(nkigym.nc_transpose(weights), v), total)


def attention_reference(q_t: np.ndarray, k_t: np.ndarray, v: np.ndarray) -> np.ndarray:
    return softmax_reference(q_t.T @ k_t / math.sqrt(q_t.shape[0])) @ v


def causal_attention(q_t, k_t, v):
    """``attention`` with the causal mask: query ``i`` attends to keys ``j <= i``
    (``affine_select`` keeps ``scores[i, j]`` where ``i - j >= 0``, ``-inf`` elsewhere).
    Tiled, a key tile wholly after a query tile is skipped: no score, exponential or
    ``P @ V`` product is computed for it."""
    scale = 1.0 / math.sqrt(q_t.shape[0])
    scores = nkigym.affine_select(nkigym.nc_matmul(q_t, k_t))
    shift = nkigym.tensor_scalar(nkigym.tensor_reduce(scores, op="max"), -scale, op="multiply")
    weights = nkigym.activation(scores, op="exp", scale=scale, bias=shift)
    total = nkigym.activation(nkigym.tensor_reduce(weights, op="sum"), op="reciprocal")
    return nkigym.tensor_scalar(nkigym.nc_matmul(nkigym.nc_transpose(weights), v), total)


def causal_attention_reference(q_t: np.ndarray, k_t: np.ndarray, v: np.ndarray) -> np.ndarray:
    scores = q_t.T @ k_t / math.sqrt(q_t.shape[0])
    keep = np.tril(np.ones(scores.shape, dtype=bool))
    return softmax_reference(np.where(keep, scores, -np.inf)) @ v


def causal_attention_flops(shapes: Shapes) -> float:
    """The FLOPs causal attention needs: ``Q K^T`` and ``P V`` over the keys each query
    sees (``j <= i``, the diagonal included), ``2 * d`` each: ``4 d * sum(min(i + 1, K))``."""
    d, queries = shapes["q_t"]
    keys = shapes["k_t"][1]
    seen = sum(min(i + 1, keys) for i in range(queries))
    return 4.0 * d * seen


# -- the table -------------------------------------------------------------------------
@dataclass(frozen=True)
class Workload:
    """A function, its reference, its named and small shapes and what it is measured by."""

    name: str
    func: Callable[..., Any]
    reference: Callable[..., np.ndarray]
    shapes: Shapes
    small: Shapes
    dtype: str
    """The named size's dtype."""
    yardstick: str
    """``mfu`` (matmul-bound) or ``dma`` (memory-bound: DMA bandwidth utilisation)."""
    buda: Shapes | None
    """Small shapes for a Tenstorrent netlist (softmax and attention rows end inside a
    tile); None: the workload has an op with no Buda form (``affine_select``)."""
    schedule: bool = False
    """Also search kernel schedules (the ``schedule`` strategy) for the end-to-end run."""

    def inputs(self, shapes: Shapes, seed: int = 0) -> dict[str, np.ndarray]:
        """Random float64 inputs of ``shapes`` (biases and norm weights around 1)."""
        rng = np.random.default_rng(seed)
        return {name: rng.standard_normal(shape) for name, shape in shapes.items()}


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "softmax",
            softmax,
            softmax_reference,
            {"x": (1024, 4096)},
            {"x": (200, 300)},
            "float32",
            "dma",
            {"x": (96, 150)},
        ),
        Workload(
            "layernorm",
            layernorm,
            layernorm_reference,
            {"x": (4096, 4096), "gamma": (1, 4096), "beta": (1, 4096)},
            {"x": (200, 300), "gamma": (1, 300), "beta": (1, 300)},
            "float32",
            "dma",
            {"x": (100, 150), "gamma": (1, 150), "beta": (1, 150)},
        ),
        Workload(
            "rmsnorm",
            rmsnorm,
            rmsnorm_reference,
            {"x": (4096, 4096), "gamma": (1, 4096)},
            {"x": (200, 300), "gamma": (1, 300)},
            "float32",
            "dma",
            {"x": (100, 150), "gamma": (1, 150)},
        ),
        Workload(
            "rmsnorm_matmul",
            rmsnorm_matmul,
            rmsnorm_matmul_reference,
            {"x": (2048, 2048), "w": (2048, 2048)},
            {"x": (200, 300), "w": (300, 260)},
            "bfloat16",
            "mfu",
            {"x": (96, 128), "w": (128, 64)},
            schedule=True,
        ),
        Workload(
            "mlp",
            mlp,
            mlp_reference,
            {"x_t": (1024, 2048), "w1": (1024, 4096), "b1": (4096, 1), "w2": (4096, 1024)},
            {"x_t": (160, 200), "w1": (160, 300), "b1": (300, 1), "w2": (300, 130)},
            "bfloat16",
            "mfu",
            {"x_t": (64, 96), "w1": (64, 128), "b1": (128, 1), "w2": (128, 64)},
        ),
        Workload(
            "attention",
            attention,
            attention_reference,
            {"q_t": (128, 2048), "k_t": (128, 2048), "v": (2048, 128)},
            {"q_t": (64, 200), "k_t": (64, 300), "v": (300, 64)},
            "bfloat16",
            "mfu",
            {"q_t": (64, 96), "k_t": (64, 100), "v": (100, 64)},
        ),
        Workload(
            "causal_attention",
            causal_attention,
            causal_attention_reference,
            {"q_t": (128, 2048), "k_t": (128, 2048), "v": (2048, 128)},
            {"q_t": (64, 300), "k_t": (64, 300), "v": (300, 64)},
            "bfloat16",
            "mfu",
            None,
        ),
    )
}


def check_all(seed: int = 0) -> None:
    """Every function on numpy equals its reference (float64, small shapes)."""
    for workload in WORKLOADS.values():
        arrays = workload.inputs(workload.small, seed)
        got = workload.func(*arrays.values())
        np.testing.assert_allclose(got, workload.reference(*arrays.values()), rtol=1e-9, atol=1e-12)


if __name__ == "__main__":
    check_all()
    print(f"workloads.py: {', '.join(WORKLOADS)} agree with their numpy references")


# -- end to end --------------------------------------------------------------------------
SIZE_VARIABLE = "NKIGYM_EXAMPLES"
"""Set to ``small`` (the tests do) to run the workload scripts at their small sizes."""


@dataclass
class Outcome:
    """What one end-to-end run found."""

    name: str
    shapes: Shapes
    dtype: str
    statements: int
    kernel: str
    """Which program the kernel is emitted from: ``search``, ``saturate`` or ``schedule``."""
    profile: Any
    """The kernel's ``nki_sim.profile``."""
    error: float
    """max |kernel - numpy| / max |numpy|."""
    buda_violations: list[str]
    buda_error: float
    """nan when the workload has no Buda form."""
    candidates: dict[str, str]
    """Per program tried (``search``, ``saturate``): its profiled time, or why it has no kernel."""
    modeled: Any
    """The cost model's ``estimate`` of the chosen program."""


def run_workload(workload: Workload, out: Any, small: bool = False, online: bool = False) -> Outcome:
    """Tile -> search (and saturate) -> emit NKI -> simulate against numpy -> profile; then
    tile for Wormhole -> emit Buda -> check -> evaluate against numpy. The kernel kept is
    the faster (profiled) of the search's best, the saturated program and, for a workload
    with ``schedule``, the ``schedule`` strategy's best (a scheduled kernel)."""
    import ml_dtypes

    from nkigym_graph_plugins.buda_backend import run_netlist

    shapes = workload.small if small else workload.shapes
    dtype = workload.dtype
    program = nkigym.tile(workload.func, shapes, dtype=dtype, online=online)
    searched = nkigym.search(program, strategy="greedy", seed=0, confirm=False).best
    storage = np.float32 if dtype == "float32" else ml_dtypes.bfloat16
    arrays = {k: v.astype(storage) for k, v in workload.inputs(shapes).items()}
    best = None
    candidates: dict[str, str] = {}
    tried = [("search", searched), ("saturate", nkigym.saturate(program))]
    if workload.schedule:
        tried.append(("schedule", nkigym.search(program, strategy="schedule", seed=0, confirm=False).best))
    for label, candidate in tried:
        try:
            kernel = nkigym.emit(candidate, backend="nki", reorder=True)
            profile = nkigym.nki_sim.profile(kernel, *arrays.values())
        except nkigym.NkigymError as err:  # e.g. on-chip memory the cost model did not see
            candidates[label] = f"no kernel: {str(err).splitlines()[0][:100]}"
            print(f"  {label}: {candidates[label]}")
            continue
        candidates[label] = f"{profile.total_us:.1f} us"
        print(f"  {label}: {len(candidate)} statements, profiled {profile.total_us:.1f} us")
        if best is None or profile.total_ns < best[3].total_ns:
            best = (label, candidate, kernel, profile)
    assert best is not None, "no kernel could be emitted"
    label, chosen, kernel, profile = best
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{workload.name}_kernel.py").write_text(kernel)
    result = np.asarray(profile.outputs)
    expected = workload.reference(*(a.astype(np.float64) for a in arrays.values()))
    error = float(np.abs(result.astype(np.float64) - expected).max() / np.abs(expected).max())
    assert error < (2e-5 if dtype == "float32" else 2e-2), (
        f"{workload.name}: kernel differs from numpy by {error}"
    )

    modeled = nkigym.estimate(chosen)
    outcome = Outcome(
        workload.name,
        shapes,
        dtype,
        len(chosen),
        label,
        profile,
        error,
        [],
        float("nan"),
        candidates,
        modeled,
    )
    if workload.buda is None:
        return outcome
    tt = nkigym.saturate(nkigym.tile(workload.func, workload.buda, target="wormhole_b0"))
    netlist = nkigym.emit_artifact(tt, backend="buda", arch="wormhole_b0")
    (out / f"{workload.name}_netlist.yaml").write_text(netlist.text)
    violations = nkigym.check_netlist(netlist.text)
    buda_inputs = workload.inputs(workload.buda)
    (evaluated,) = run_netlist(netlist, {k: v.astype(np.float32) for k, v in buda_inputs.items()}).values()
    buda_expected = workload.reference(*buda_inputs.values())
    buda_error = float(np.abs(evaluated - buda_expected).max() / np.abs(buda_expected).max())
    outcome.buda_violations, outcome.buda_error = violations, buda_error
    return outcome


def report(outcome: Outcome) -> str:
    """Lines summarising an outcome."""
    shapes = ", ".join(f"{k} {v[0]}x{v[1]}" for k, v in outcome.shapes.items())
    prof = outcome.profile
    return "\n".join(
        [
            f"{outcome.name} ({shapes}, {outcome.dtype}): kernel from {outcome.kernel}, "
            f"{outcome.statements} statements; max relative error vs numpy {outcome.error:.1e}",
            f"  profiled: {prof.total_us:.1f} us, MFU {prof.mfu:.1%}, "
            f"DMA {prof.dma_gbps:.0f} GB/s effective, {prof.critical}",
            f"  Buda (wormhole_b0): checker {outcome.buda_violations or 'clean'}, "
            f"relative error vs numpy {outcome.buda_error:.1e}"
            if not math.isnan(outcome.buda_error)
            else "  Buda: no netlist (affine_select has no Buda form)",
        ]
    )


def main(names: list[str], argv: list[str]) -> None:
    """Run ``names`` end to end; ``argv``: ``[OUTPUT_DIR] [--small] [--online]``."""
    import os
    from pathlib import Path

    flags = {a for a in argv if a.startswith("--")}
    paths = [a for a in argv if not a.startswith("--")]
    out = Path(paths[0] if paths else "out")
    small = "--small" in flags or os.environ.get(SIZE_VARIABLE) == "small"
    for name in names:
        outcome = run_workload(WORKLOADS[name], out, small=small, online="--online" in flags)
        assert not outcome.buda_violations and not outcome.buda_error >= 1e-3
        print(report(outcome))
