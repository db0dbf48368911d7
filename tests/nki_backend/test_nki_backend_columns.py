"""Store chains cut into column pieces (``columns``) and skewed by a row (``skew``): the
same values, piece by piece and in the new order, for softmax and the normalisations
at ragged sizes, fp32 and bf16, in the interpreter and in the NKI simulator."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from support import example_workloads

import nkigym_graph as ng
from nkigym_graph_plugins.nki_backend.columns import column_pieces, split_columns, store_chains
from nkigym_graph_plugins.nki_backend.skew import skew_store_chains

workloads = example_workloads()
layernorm, layernorm_reference = workloads.layernorm, workloads.layernorm_reference
rmsnorm, rmsnorm_reference = workloads.rmsnorm, workloads.rmsnorm_reference
softmax, softmax_reference = workloads.softmax, workloads.softmax_reference

BF16 = np.dtype(ml_dtypes.bfloat16)
CASES = {
    "softmax": (softmax, softmax_reference, {"x": (200, 2100)}),
    "layernorm": (layernorm, layernorm_reference, {"x": (300, 1100), "gamma": (1, 1100), "beta": (1, 1100)}),
    "rmsnorm": (rmsnorm, rmsnorm_reference, {"x": (130, 2048), "gamma": (1, 2048)}),
}
REWRITES = {
    "split": lambda p: split_columns(p, 4),
    "split_2": lambda p: split_columns(p, 2),
    "skew": skew_store_chains,
    "split_skew": lambda p: skew_store_chains(split_columns(p, 4)),
}


def _inputs(shapes: dict[str, tuple[int, int]], seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal(shape) for name, shape in shapes.items()}


def _relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    return float(np.abs(got.astype(np.float64) - expected).max() / np.abs(expected).max())


def test_pieces_are_near_equal_and_never_narrower_than_the_minimum() -> None:
    assert column_pieces(4096, 4) == [(0, 1024), (1024, 2048), (2048, 3072), (3072, 4096)]
    assert column_pieces(1300, 4) == [(0, 650), (650, 1300)]  # only two pieces of >= 512
    assert column_pieces(1000, 4) == [(0, 1000)]


def test_the_store_chain_splits_from_the_store_up_to_the_reductions() -> None:
    program = ng.saturate(ng.tile(softmax, {"x": (200, 1300)}))
    split = split_columns(program, 4)
    stores = [s for s in split.statements if s.op.name == "store"]
    assert [s.dst.slices[1] for s in stores] == [(0, 650), (650, 1300)] * 2  # two row tiles
    count = {
        name: sum(s.op.name == name for s in program.statements)
        for name in ("tensor_reduce", "activation_bias")
    }
    assert count == {name: sum(s.op.name == name for s in split.statements) for name in count}  # not split
    x = _inputs({"x": (200, 1300)})["x"]
    np.testing.assert_array_equal(ng.interpret(split, x=x), ng.interpret(program, x=x))  # same arithmetic
    np.testing.assert_allclose(ng.interpret(split, x=x), softmax_reference(x), rtol=1e-6)
    narrow = ng.saturate(ng.tile(softmax, {"x": (200, 600)}))
    assert split_columns(narrow, 4) is narrow  # too narrow for two pieces: as it is


def test_skew_issues_the_next_rows_statistics_before_a_rows_store_chain() -> None:
    program = ng.saturate(ng.tile(layernorm, CASES["layernorm"][2]))
    skewed = skew_store_chains(program)
    names = [s.op.name for s in skewed.statements]
    reductions = [i for i, name in enumerate(names) if name == "tensor_reduce"]
    stores = [i for i, name in enumerate(names) if name == "store"]
    assert len(stores) == 3 and reductions[2] < stores[0]  # the second row's sum before the first store
    assert sorted(map(str, skewed.statements)) == sorted(map(str, program.statements))
    assert len(store_chains(program)) == len(store_chains(skewed))


@pytest.mark.parametrize("rewrite", sorted(REWRITES))
@pytest.mark.parametrize("name", sorted(CASES))
def test_rewritten_kernels_simulate_equal_to_numpy_fp32(name: str, rewrite: str) -> None:
    func, reference, shapes = CASES[name]
    program = REWRITES[rewrite](ng.saturate(ng.tile(func, shapes)))
    arrays = _inputs(shapes)
    out = ng.nki_sim.simulate(
        ng.emit(program, backend="nki"), *(a.astype(np.float32) for a in arrays.values())
    )
    assert _relative_error(out, reference(*arrays.values())) < 2e-5


@pytest.mark.parametrize("name", sorted(CASES))
def test_reordered_kernels_simulate_equal_to_numpy_bf16(name: str) -> None:
    """``reorder=True`` tries the split and skewed lowerings; whichever it keeps is exact
    to bf16's precision."""
    func, reference, shapes = CASES[name]
    program = ng.saturate(ng.tile(func, shapes, dtype="bfloat16"))
    arrays = {k: v.astype(BF16) for k, v in _inputs(shapes, seed=1).items()}
    for candidate in (program, REWRITES["split_skew"](program)):
        out = ng.nki_sim.simulate(ng.emit(candidate, backend="nki", reorder=True), *arrays.values())
        assert out.dtype == BF16
        assert _relative_error(out, reference(*(a.astype(np.float64) for a in arrays.values()))) < 2e-2


def test_online_softmax_skewed_and_split_equals_numpy() -> None:
    """Running maxima and rescaled sums are rewritten as the row proceeds: the skew must not
    move a chain past a statement that rewrites what it reads."""
    shapes = {"x": (256, 2048)}
    program = REWRITES["split_skew"](ng.saturate(ng.tile(softmax, shapes, online=True)))
    x = _inputs(shapes)["x"]
    out = ng.nki_sim.simulate(ng.emit(program, backend="nki", reorder=True), x.astype(np.float32))
    assert _relative_error(out, softmax_reference(x)) < 2e-5
