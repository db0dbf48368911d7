"""Recipes per strand (:mod:`.mix`), strands (:mod:`.strands`) and the interleaving of
instruction groups (:mod:`.interleave`): which statements form a strand, which counts
the small integer program picks, that interleaving keeps every group after what it
depends on, and that mixed, interleaved kernels (layer norm and softmax at ragged
shapes, fp32 and bf16) equal float64 numpy."""

from __future__ import annotations

from functools import partial
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nkigym_graph as ng
from nkigym_graph.ir.targets import TRN2
from nkigym_graph_plugins.nki_backend import emitter
from nkigym_graph_plugins.nki_backend.engines import GPSIMD, SCALAR, VECTOR, Recipe
from nkigym_graph_plugins.nki_backend.interleave import _accesses
from nkigym_graph_plugins.nki_backend.lower import kernel_types, lower_program
from nkigym_graph_plugins.nki_backend.lowering import LOWERINGS
from nkigym_graph_plugins.nki_backend.mix import best_counts, spread
from nkigym_graph_plugins.nki_backend.render import KernelText, render_kernel
from nkigym_graph_plugins.nki_backend.strands import strands

from .test_nki_backend_moments import layernorm, layernorm_numpy

BF16 = np.dtype(ml_dtypes.bfloat16)
A = Recipe(False, False, SCALAR, GPSIMD)
B = Recipe(False, True, SCALAR, GPSIMD)
C = Recipe(True, False, VECTOR, VECTOR)


def softmax(x: Any) -> Any:
    e = ng.activation(ng.tensor_scalar(x, ng.tensor_reduce(x, op="max"), op="subtract"), op="exp")
    return ng.tensor_scalar(e, ng.tensor_reduce(e, op="sum"), op="divide")


def softmax_numpy(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_each_row_tile_of_a_layer_norm_is_one_strand_and_shared_rows_are_none() -> None:
    program = ng.saturate(ng.tile(layernorm, {"x": (300, 700), "g": (1, 700), "b": (1, 700)}))
    strand_of = strands(program)
    assert sorted(set(strand_of.values())) == [0, 1, 2]
    loads = [n for n in program.ids if program[n].op.name == "load"]
    shared = [n for n in loads if n not in strand_of]
    assert sorted(program[n].operands[0].var for n in shared) == ["b", "g"]
    for node, strand in strand_of.items():  # a statement and its inputs' strands agree
        for pred in program.predecessors(node):
            assert strand_of.get(pred, strand) == strand


def test_counts_balance_the_busiest_engine() -> None:
    prices = {A: (0.0, 2.0, 0.0), B: (2.0, 0.0, 0.0), C: (0.0, 0.0, 2.0)}
    assert best_counts(prices, 3) == {A: 1, B: 1, C: 1}
    assert best_counts(prices, 2) in ({A: 1, B: 1}, {A: 1, C: 1}, {B: 1, C: 1})
    # a recipe no cheaper anywhere than another is never taken
    assert best_counts({A: (1.0, 1.0, 1.0), B: (2.0, 1.0, 1.0)}, 4) == {A: 4}


def test_spread_interleaves_the_recipes_evenly() -> None:
    assert spread({A: 2, B: 2, C: 1}) == [A, B, C, A, B]
    assert spread({A: 1}) == [A]


def _mixed_kernels(func: Any, shapes: dict[str, tuple[int, int]], dtype: np.dtype) -> list[str]:
    """Every mixed, interleaved lowering the emitter tries, as kernel text."""
    program = ng.saturate(ng.tile(func, shapes, dtype=dtype))
    lower = partial(lower_program, target=TRN2, types=kernel_types(program, None), lowerings=LOWERINGS)
    texts = []
    for make in emitter._mixes(program, lower):
        kb = make()
        returns = tuple(kb.hbm[var].name for var in program.returns)
        texts.append(render_kernel(KernelText("kernel", tuple(kb.params), returns, ""), kb.groups))
    return texts


def test_a_single_strand_program_gets_no_mix() -> None:
    assert _mixed_kernels(softmax, {"x": (100, 300)}, np.dtype(np.float32)) == []


def test_interleaving_keeps_each_group_after_the_groups_it_depends_on() -> None:
    program = ng.saturate(ng.tile(layernorm, {"x": (384, 700), "g": (1, 700), "b": (1, 700)}))
    lower = partial(lower_program, target=TRN2, types=kernel_types(program, None), lowerings=LOWERINGS)
    (make, *_) = emitter._mixes(program, lower)
    kb = make()
    written: set[int] = set()
    for group in kb.groups:
        read, writes = _accesses(group)
        # every on-chip tile a group reads was written (allocated) by an earlier group
        on_chip = {id(t) for g in kb.groups for t in _tiles(g)}
        assert (read & on_chip) <= written | writes
        written |= writes


def _tiles(group: Any) -> list[Any]:
    from nkigym_graph_plugins.nki_backend.ir import Alloc

    return [instr.tile for instr in group.instrs if isinstance(instr, Alloc)]


@settings(max_examples=6, deadline=None, derandomize=True)
@given(r=st.integers(129, 520), c=st.integers(2, 1300), bf16=st.booleans(), seed=st.integers(0, 9))
def test_mixed_layer_norms_at_random_shapes_equal_numpy(r: int, c: int, bf16: bool, seed: int) -> None:
    dtype = BF16 if bf16 else np.dtype(np.float32)
    shapes = {"x": (r, c), "g": (1, c), "b": (1, c)}
    texts = _mixed_kernels(layernorm, shapes, dtype)
    assert texts
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes.values()]
    exact = layernorm_numpy(*(a.astype(np.float64) for a in arrays))
    tolerance = 3e-2 if bf16 else 2e-5
    for text in texts[:: max(1, len(texts) // 3)]:
        out = np.asarray(ng.nki_sim.simulate(text, *arrays), dtype=np.float64)
        np.testing.assert_allclose(out, exact, rtol=tolerance, atol=tolerance * max(1.0, np.abs(exact).max()))


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), BF16])
def test_mixed_softmax_over_several_row_tiles_equals_numpy(dtype: np.dtype) -> None:
    shapes = {"x": (300, 700)}
    texts = _mixed_kernels(softmax, shapes, dtype)
    assert texts
    x = np.random.default_rng(3).standard_normal(shapes["x"]).astype(dtype)
    tolerance = 3e-2 if dtype == BF16 else 2e-5
    for text in texts:
        out = np.asarray(ng.nki_sim.simulate(text, x), dtype=np.float64)
        np.testing.assert_allclose(out, softmax_numpy(x.astype(np.float64)), rtol=tolerance, atol=tolerance)
