"""Recipes per strand (:mod:`.mix`), strands (:mod:`.strands`) and the interleaving of
instruction groups (:mod:`.interleave`): which statements form a strand, which counts
the small integer program picks, that interleaving keeps every group after what it
depends on, the row added by a DMA in place and the engines and ring each recipe takes,
the last strands in column pieces, the revisited recipes, and that mixed, interleaved
kernels (layer norm and softmax at ragged shapes, fp32 and bf16) equal float64 numpy."""

from __future__ import annotations

import re
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
from nkigym_graph_plugins.nki_backend.columns import split_columns
from nkigym_graph_plugins.nki_backend.engines import GPSIMD, SCALAR, VECTOR, Recipe
from nkigym_graph_plugins.nki_backend.interleave import _accesses
from nkigym_graph_plugins.nki_backend.lower import kernel_types, lower_program
from nkigym_graph_plugins.nki_backend.lowering import LOWERINGS
from nkigym_graph_plugins.nki_backend.mix import (
    END_PIECES,
    END_STRANDS,
    RECIPES,
    START_STRANDS,
    _least_counts,
    best_counts,
    distinct,
    ending,
    mixed,
    price,
    refine,
    spread,
)
from nkigym_graph_plugins.nki_backend.render import KernelText, render_kernel
from nkigym_graph_plugins.nki_backend.skew import skew_store_chains
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


def _every_count(total: int, parts: int) -> list[tuple[int, ...]]:
    if parts == 1:
        return [(total,)]
    return [(first, *rest) for first in range(total + 1) for rest in _every_count(total - first, parts - 1)]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    costs=st.lists(
        st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25, 7.1]), min_size=3, max_size=3).map(tuple),
        min_size=1,
        max_size=6,
    ),
    total=st.integers(1, 8),
)
def test_the_pruned_count_search_finds_what_trying_every_count_finds(
    costs: list[tuple[float, ...]], total: int
) -> None:
    loads = [
        [sum(n * c[e] for n, c in zip(counts, costs, strict=True)) for e in range(3)]
        for counts in _every_count(total, len(costs))
    ]
    keys = [(max(load), sum(load)) for load in loads]
    first_least = _every_count(total, len(costs))[keys.index(min(keys))]
    assert _least_counts(costs, total) == first_least


def test_refine_tries_one_recipe_per_distinct_price() -> None:
    """Recipes that differ only in what a program has none of (a softmax has no ``+ beta``
    for a DMA to add) lower alike and price alike: refine tries the first of them."""
    prices = {A: (1.0, 2.0), D: (1.0, 2.0), B: (2.0, 1.0), S: (1.0, 2.0)}
    assert distinct(prices) == (A, B)
    program = ng.saturate(ng.tile(softmax, {"x": (384, 700)}))
    lower = partial(lower_program, target=TRN2, types=kernel_types(program, None), lowerings=LOWERINGS)
    skewed = skew_store_chains(program)
    priced = price(lambda recipes: lower(skewed, engine_policy="recipe", recipes=recipes), 3)
    kept = distinct(priced)
    assert not any(r.dma_add for r in kept)  # each priced like its twin without the DMA
    assert {priced[r] for r in RECIPES} == {priced[r] for r in kept}
    assert len({priced[r] for r in kept}) == len(kept) < len(RECIPES)


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


D = Recipe(False, False, SCALAR, GPSIMD, dma_add=True)


def _layernorm_lowering(shapes: dict[str, tuple[int, int]], dtype: np.dtype) -> tuple[Any, Any]:
    program = ng.saturate(ng.tile(layernorm, shapes, dtype=dtype))
    lower = partial(lower_program, target=TRN2, types=kernel_types(program, None), lowerings=LOWERINGS)
    return program, lower


def _text(program: Any, kb: Any) -> str:
    returns = tuple(kb.hbm[var].name for var in program.returns)
    return render_kernel(KernelText("kernel", tuple(kb.params), returns, ""), kb.groups)


def _check(text: str, shapes: dict[str, tuple[int, int]], dtype: np.dtype, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes.values()]
    exact = layernorm_numpy(*(a.astype(np.float64) for a in arrays))
    tolerance = 3e-2 if dtype == BF16 else 2e-5
    out = np.asarray(ng.nki_sim.simulate(text, *arrays), dtype=np.float64)
    np.testing.assert_allclose(out, exact, rtol=tolerance, atol=tolerance * max(1.0, np.abs(exact).max()))


def test_a_recipe_adding_the_row_by_dma_moves_the_addition_to_the_inbound_ring() -> None:
    """The ``+ beta`` of each row tile is a DMA adding the spread row into the tile of
    ``(x - mean) * rstd * gamma`` in place, which the store then reads: the GpSimd Engine
    does one two-input pass per tile instead of two, the inbound ring moves the row."""
    shapes = {"x": (384, 1000), "g": (1, 1000), "b": (1, 1000)}
    program, lower = _layernorm_lowering(shapes, np.dtype(np.float32))
    skewed = skew_store_chains(program)
    plain, by_dma = (lower(skewed, engine_policy="recipe", recipes=(r,)) for r in (A, D))
    assert "dst_rmw_op=nl.add" in _text(program, by_dma) and "dst_rmw_op" not in _text(program, plain)
    two_input = plain.engines.time_ns(GPSIMD, 1000, 2)
    assert by_dma.engines.busy[GPSIMD] == pytest.approx(plain.engines.busy[GPSIMD] - 3 * two_input)
    assert by_dma.engines.rings["load"] > plain.engines.rings["load"]
    prices = price(lambda recipes: lower(skewed, engine_policy="recipe", recipes=recipes), 3)
    assert len(prices[D]) == 5  # Vector, Scalar, GpSimd, inbound ring, outbound ring
    assert prices[D][2] < prices[A][2] and prices[D][3] > prices[A][3]


S = Recipe(False, False, SCALAR, GPSIMD, dma_add=True, at_store=True)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), BF16])
def test_a_recipe_adding_the_row_by_the_store_moves_the_addition_to_the_outbound_ring(
    dtype: np.dtype,
) -> None:
    """The ``+ beta`` of each row tile becomes a DMA storing the spread row to the tile's
    output region (it needs nothing computed) and the store of ``(x - mean) * rstd *
    gamma`` adding into it: the GpSimd Engine does one two-input pass per tile instead of
    two, the outbound ring moves the row, the inbound ring nothing more."""
    shapes = {"x": (384, 1000), "g": (1, 1000), "b": (1, 1000)}
    program, lower = _layernorm_lowering(shapes, dtype)
    skewed = skew_store_chains(program)
    plain, by_store = (lower(skewed, engine_policy="recipe", recipes=(r,)) for r in (A, S))
    text = _text(program, by_store)
    region = r"nisa\.dma_copy\(dst=(\w+)\[(\d+):\d+, 0:1000\], src=(\w+)"
    rows_stored = re.findall(region + r"\)", text)
    added = re.findall(region + r", dst_rmw_op=nl\.add\)", text)
    starts = ["0", "128", "256"]
    assert sorted(start for _, start, _ in rows_stored) == sorted(start for _, start, _ in added) == starts
    assert len({src for *_, src in rows_stored}) == 1  # the one spread row
    two_input = plain.engines.time_ns(GPSIMD, 1000, 2)
    assert by_store.engines.busy[GPSIMD] == pytest.approx(plain.engines.busy[GPSIMD] - 3 * two_input)
    assert by_store.engines.rings["store"] > plain.engines.rings["store"]
    assert by_store.engines.rings["load"] == pytest.approx(plain.engines.rings["load"])
    _check(text, shapes, dtype)


SCALED_SHIFT = """
def f(x, g, b):
    output = nkigym.ndarray((128, 96), dtype=np.float32)
    tensor_0 = x[0:128, 0:96]
    tensor_1 = g[0:1, 0:96]
    tensor_2 = nkigym.tensor_tensor(tensor_0, tensor_1, op="multiply")
    tensor_3 = b[0:1, 0:96]
    tensor_4 = nkigym.tensor_tensor(tensor_2, tensor_3, op="add")
{between}    output[0:128, 0:96] = tensor_4
    return output
"""


@pytest.mark.parametrize("between", ["", "    output[0:128, 0:96] = tensor_0\n"])
def test_the_store_adds_the_row_only_where_nothing_else_touches_its_region_before_it(between: str) -> None:
    """The row stored at the addition must stay in the output region until the result's
    store adds into it: with another store to the region in between, the DMA adds the row
    into the tile instead (else the output would be ``x + x * g + b``)."""
    program = ng.parse_program(SCALED_SHIFT.format(between=between))
    types = kernel_types(program, None)
    kb = lower_program(program, TRN2, types, LOWERINGS, engine_policy="recipe", recipes=(S,))
    assert bool(kb.added_by_store) == (not between)
    rng = np.random.default_rng(5)
    x, g, b = (rng.standard_normal(shape).astype(np.float32) for shape in ((128, 96), (1, 96), (1, 96)))
    out = ng.nki_sim.simulate(_text(program, kb), x, g, b)
    np.testing.assert_allclose(out, x.astype(np.float64) * g + b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), BF16])
@pytest.mark.parametrize("shape", [(300, 700), (260, 1300)])
def test_every_recipe_alone_equals_numpy_at_ragged_shapes(dtype: np.dtype, shape: tuple[int, int]) -> None:
    rows, cols = shape
    shapes = {"x": (rows, cols), "g": (1, cols), "b": (1, cols)}
    program, lower = _layernorm_lowering(shapes, dtype)
    skewed = skew_store_chains(program)
    for recipe in RECIPES:
        kb = mixed(lambda recipes: lower(skewed, engine_policy="recipe", recipes=recipes), (recipe,), 24)
        _check(_text(program, kb), shapes, dtype)


def test_only_the_given_statements_are_cut_into_column_pieces() -> None:
    program = ng.saturate(ng.tile(layernorm, {"x": (384, 2048), "g": (1, 2048), "b": (1, 2048)}))
    strand_of = strands(program)
    last = {node for node, strand in strand_of.items() if strand == 2}
    cut = split_columns(program, 4, last)
    stores = [stmt for stmt in cut.statements if stmt.op.name == "store"]
    widths = sorted(stmt.dst.slices[1][1] - stmt.dst.slices[1][0] for stmt in stores)
    assert widths == [512, 512, 512, 512, 2048, 2048]  # strand 2's store in four pieces
    assert split_columns(program, 4, set()) is program


def test_the_last_strands_follow_no_recipe_and_share_one_spread_of_each_row() -> None:
    assert ending((A, B), END_STRANDS + 3) == (A, B, A) + (None,) * END_STRANDS
    count = END_STRANDS + 2
    shapes = {"x": (128 * count, 2048), "g": (1, 2048), "b": (1, 2048)}
    program, lower = _layernorm_lowering(shapes, np.dtype(np.float32))
    last = {node for node, strand in strands(program).items() if strand >= 2}
    cut = skew_store_chains(split_columns(program, END_PIECES, last))
    kb = mixed(lambda recipes: lower(cut, engine_policy="recipe", recipes=recipes), ending((A, D), count), 40)
    text = _text(program, kb)
    assert text.count("nisa.nc_matmul(") == 2 * 4  # g and b spread once each, 512 columns a matmul
    assert text.count("buffer=nl.psum") <= 4  # in rotating banks
    _check(text, shapes, np.dtype(np.float32))


def test_revisiting_the_first_and_last_strands_never_ends_later() -> None:
    shapes = {"x": (1280, 1024), "g": (1, 1024), "b": (1, 1024)}
    program, lower = _layernorm_lowering(shapes, np.dtype(np.float32))
    skewed = skew_store_chains(program)

    def on(recipes: Any) -> Any:
        return lower(skewed, engine_policy="recipe", recipes=recipes)

    start = (A,) * 10
    kb = refine(on, start, 24, lambda kb: True)
    assert kb.engines.makespan <= mixed(on, start, 24).engines.makespan
    _check(_text(program, kb), shapes, np.dtype(np.float32))


def test_the_first_and_last_strands_store_in_column_pieces() -> None:
    count = END_STRANDS + 3
    shapes = {"x": (128 * count, 1024), "g": (1, 1024), "b": (1, 1024)}
    *_, ended = _mixed_kernels(layernorm, shapes, np.dtype(np.float32))
    # the output regions stored (a row stored first where the store adds into it: one region)
    regions = set(re.findall(r"nisa\.dma_copy\(dst=\w+\[(\d+):\d+, (\d+):\d+\]", ended))
    pieces = [sum(1 for row, _ in regions if row == str(128 * strand)) for strand in range(count)]
    cut = [strand < START_STRANDS or strand >= count - END_STRANDS for strand in range(count)]
    assert pieces == [END_PIECES if edge else 1 for edge in cut]
    _check(ended, shapes, np.dtype(np.float32))
