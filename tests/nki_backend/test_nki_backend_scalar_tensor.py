"""Chains of column steps and element-wise ops as ``nisa.scalar_tensor_tensor`` s: which
statements chain, when the engine model fuses a chain, and kernels (layer norm, RMS norm,
random shapes, fp32 and bf16) equal to numpy."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import nkigym_graph as ng
from nkigym_graph.ir.targets import TRN2
from nkigym_graph.nki_sim.timing.constants import TRN2_TIMING
from nkigym_graph_plugins.nki_backend.engines import GPSIMD, SCALAR, VECTOR, EngineLoads, Recipe
from nkigym_graph_plugins.nki_backend.fusion import plan_fusions
from nkigym_graph_plugins.nki_backend.ir import Ref, Tile, whole
from nkigym_graph_plugins.nki_backend.lower import kernel_types, lower_program
from nkigym_graph_plugins.nki_backend.lowering import LOWERINGS
from nkigym_graph_plugins.nki_backend.render import KernelText, render_kernel
from nkigym_graph_plugins.nki_backend.scalar_tensor import fused_first

BF16 = np.dtype(ml_dtypes.bfloat16)
EPS = 1e-5


def layernorm(x: Any, g: Any, b: Any) -> Any:
    mean = ng.tensor_reduce(x, op="mean")
    msq = ng.tensor_reduce(ng.activation(x, op="square"), op="mean")
    rstd = ng.activation(
        ng.tensor_tensor(msq, ng.activation(mean, op="square"), op="subtract"), op="rsqrt", bias=EPS
    )
    normed = ng.tensor_scalar(ng.tensor_scalar(x, mean, op="subtract"), rstd, op="multiply")
    return ng.tensor_tensor(ng.tensor_tensor(normed, g, op="multiply"), b, op="add")


def layernorm_numpy(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    centred = x - x.mean(axis=1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=1, keepdims=True) + EPS) * g + b


def rmsnorm(x: Any, g: Any) -> Any:
    scale = ng.activation(ng.tensor_reduce(ng.activation(x, op="square"), op="mean"), op="rsqrt", bias=EPS)
    return ng.tensor_tensor(ng.tensor_scalar(x, scale), g, op="multiply")


def rmsnorm_numpy(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x**2).mean(axis=1, keepdims=True) + EPS) * g


def _chains(program: ng.Program) -> list[tuple[str, ...]]:
    fusions = plan_fusions(program, list(program.ids))
    return [tuple(program[n].op.name for n in chain) for chain in fusions.chains.values()]


def test_the_normalisation_and_both_row_ops_chain() -> None:
    program = ng.saturate(ng.tile(layernorm, {"x": (128, 512), "g": (1, 512), "b": (1, 512)}))
    assert ("tensor_column", "tensor_row", "tensor_row") in _chains(program)


def test_a_scaling_and_its_row_op_chain() -> None:
    program = ng.saturate(ng.tile(rmsnorm, {"x": (128, 512), "g": (1, 512)}))
    assert _chains(program) == [("tensor_column", "tensor_row")]


def test_a_step_that_does_not_commute_past_the_row_op_ends_no_chain_of_two() -> None:
    def shifted(x: Any, c: Any, g: Any, b: Any) -> Any:
        t = ng.tensor_scalar(ng.tensor_scalar(x, c, op="multiply"), c, op="add")  # add, then a multiply
        return ng.tensor_tensor(ng.tensor_tensor(t, g, op="multiply"), b, op="add")

    program = ng.saturate(ng.tile(shifted, {"x": (128, 256), "c": (128, 1), "g": (1, 256), "b": (1, 256)}))
    assert _chains(program) == []


def test_a_tile_read_twice_ends_no_chain() -> None:
    def twice(x: Any, c: Any, y: Any) -> Any:
        t = ng.tensor_scalar(x, c, op="multiply")
        return ng.tensor_tensor(ng.tensor_tensor(t, y, op="add"), t, op="multiply")

    program = ng.saturate(ng.tile(twice, {"x": (128, 256), "c": (128, 1), "y": (128, 256)}))
    assert _chains(program) == []


def _tile(name: str, columns: int) -> Ref:
    tile = Tile(name, (128, columns), "nl.float32", "sbuf", 4)
    return Ref(tile, whole(tile.shape))


def test_the_chain_fuses_where_the_vector_engine_finishes_it_first() -> None:
    data, column, row = _tile("x", 4096), _tile("c", 1), _tile("g", 4096)
    idle = EngineLoads(TRN2_TIMING, "finish")
    # fused: one two-input Vector pass, 8.6 us; plain: Scalar 3.6 us, hand-over, GpSimd 6.0 us
    assert fused_first(idle, data, [column], [row])
    busy = EngineLoads(TRN2_TIMING, "finish")
    busy.run(VECTOR, 8192, 1, [], 99)  # the Vector Engine has 8.6 us of work queued
    assert not fused_first(busy, data, [column], [row])
    assert not fused_first(EngineLoads(TRN2_TIMING, "fixed"), data, [column], [row])
    assert idle.busy[VECTOR] == 0.0  # pricing the two ways queues nothing


def _kernel(program: ng.Program) -> str:
    return ng.emit(program, backend="nki", reorder=True)


def test_layer_norm_kernel_fuses_and_equals_numpy() -> None:
    """Every row tile fused (a recipe that says so: whether ``emit`` fuses depends on the
    engine model's mix)."""
    shapes = {"x": (200, 1100), "g": (1, 1100), "b": (1, 1100)}
    program = ng.saturate(ng.tile(layernorm, shapes))
    fused = Recipe(moments=False, fused=True, one_input=SCALAR, two_input=GPSIMD)
    kb = lower_program(
        program, TRN2, kernel_types(program, None), LOWERINGS, engine_policy="recipe", recipes=(fused,)
    )
    returns = tuple(kb.hbm[var].name for var in program.returns)
    text = render_kernel(KernelText("kernel", tuple(kb.params), returns, ""), kb.groups)
    assert text.count("nisa.scalar_tensor_tensor(") >= 2 * 2  # at least two per row tile
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes.values()]
    out = ng.nki_sim.simulate(text, *arrays)
    np.testing.assert_allclose(
        out, layernorm_numpy(*(a.astype(np.float64) for a in arrays)), rtol=2e-5, atol=2e-5
    )


@settings(max_examples=8, deadline=None, derandomize=True)
@given(
    r=st.integers(1, 260),
    c=st.integers(2, 700),
    norm=st.sampled_from(["layernorm", "rmsnorm"]),
    bf16=st.booleans(),
    seed=st.integers(0, 9),
)
def test_norm_kernels_at_random_shapes_equal_numpy(r: int, c: int, norm: str, bf16: bool, seed: int) -> None:
    func, reference = (layernorm, layernorm_numpy) if norm == "layernorm" else (rmsnorm, rmsnorm_numpy)
    shapes = {"x": (r, c), "g": (1, c), "b": (1, c)} if norm == "layernorm" else {"x": (r, c), "g": (1, c)}
    dtype = BF16 if bf16 else np.dtype(np.float32)
    program = ng.saturate(ng.tile(func, shapes, dtype=dtype))
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes.values()]
    out = np.asarray(ng.nki_sim.simulate(_kernel(program), *arrays), dtype=np.float64)
    wide = [a.astype(np.float64) for a in arrays]
    exact = reference(*wide)
    # the variance as mean(x^2) - mean^2 loses what the squares' mean has over it
    x = wide[0]
    cancelling = (x**2).mean(axis=1) / (x.var(axis=1) + EPS) if norm == "layernorm" else 1.0
    tolerance = (3e-2 if bf16 else 2e-5) * max(1.0, float(np.max(cancelling)))
    np.testing.assert_allclose(out, exact, rtol=tolerance, atol=tolerance * max(1.0, np.abs(exact).max()))
