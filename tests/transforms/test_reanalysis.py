"""Analyses updated along derivations equal analyses done in full."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transforms.test_transforms_properties import TRANSFORMS, tiled_cases

import nkigym_graph as ng
from nkigym_graph.ir import overlay
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.plugin.transforms import matches_of
from nkigym_graph.rewriting.analysis_cache import analysis_of

INCREMENTAL = ["data_reuse", "operand_merge", "free_dim_merge", "dead_code"]


def assert_reanalysis_is_analysis(program: ng.Program, name: str) -> None:
    transform = ng.get_transform(name)
    assert list(matches_of(program, transform)) == transform.analyze(program)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiled_cases(), st.lists(st.tuples(st.sampled_from(TRANSFORMS), st.integers(0, 10**6)), max_size=10))
def test_updated_analyses_equal_full_ones(case, steps) -> None:
    program = case[0]
    for name in INCREMENTAL:
        matches_of(program, ng.get_transform(name))  # known at the root: updated from here on
    for transform, pick in steps:
        matches = matches_of(program, ng.get_transform(transform))
        if not matches:
            continue
        program = ng.apply(program, transform, matches[pick % len(matches)])
        for name in INCREMENTAL:
            assert_reanalysis_is_analysis(program, name)


@pytest.mark.parametrize("name", INCREMENTAL)
def test_a_derived_snapshot_updates_its_parents_analysis(name: str) -> None:
    program = tiled_matmul(512, 256, 512)
    transform = ng.get_transform(name)
    calls = []
    original = type(transform).analysis

    class Counting(type(transform)):  # type: ignore[misc]
        def analysis(self, program):  # type: ignore[no-untyped-def]
            calls.append(program)
            return original(self, program)

    counting = Counting()
    analysis_of(program, counting)
    reuse = ng.get_transform("data_reuse")
    child = ng.apply(program, reuse, reuse.analyze(program)[0])
    assert list(matches_of(child, counting)) == transform.analyze(child)
    assert calls == [program]  # the child's came from the parent's


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiled_cases(), st.lists(st.tuples(st.sampled_from(TRANSFORMS), st.integers(0, 10**6)), max_size=8))
def test_batches_from_the_cached_analysis_equal_batches_analysed_afresh(case, steps) -> None:
    program = case[0]
    merge = ng.get_transform("operand_merge")
    for transform, pick in steps:
        matches = matches_of(program, ng.get_transform(transform))
        if matches:
            program = ng.apply(program, transform, matches[pick % len(matches)])
    expected = merge._matches(program, merge.pattern.runs(program))  # a set pattern's runs, found afresh
    assert merge.analyze_batch(program) == list(expected)


def _reductions(x, w):
    """Row sums and maxima over several chunks (partial reductions), then a matmul."""
    total = ng.tensor_reduce(x, op="sum")
    largest = ng.tensor_reduce(ng.activation(x, op="exp"), op="max")
    return ng.nc_matmul(ng.tensor_tensor(total, largest, op="add"), w)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([(128, 300), (200, 520), (256, 1100)]),
    st.lists(
        st.tuples(st.sampled_from([*TRANSFORMS, "reduction_merge"]), st.integers(0, 10**6)),
        max_size=10,
    ),
)
def test_updated_reduction_merge_analyses_equal_full_ones(shape, steps) -> None:
    rows, width = shape
    program = ng.tile(_reductions, {"x": (rows, width), "w": (rows, 64)}, dtype=np.float64)
    merge = ng.get_transform("reduction_merge")
    matches_of(program, merge)  # known at the root: updated from here on
    for transform, pick in steps:
        matches = matches_of(program, ng.get_transform(transform))
        if not matches:
            continue
        program = ng.apply(program, transform, matches[pick % len(matches)])
        assert_reanalysis_is_analysis(program, "reduction_merge")


def test_an_equal_patterns_update_moves_only_the_pairs_it_touched(monkeypatch) -> None:
    from nkigym_graph.rewriting.patterns import equal

    moved = []
    original = equal._replaced

    def counting(specs, leaving, joining):  # type: ignore[no-untyped-def]
        found = original(specs, leaving, joining)
        moved.append(found is not None)
        return found

    monkeypatch.setattr(equal, "_replaced", counting)
    program = tiled_matmul(512, 512, 512)  # 4 x 4 output tiles, each loading a and b 4 times
    reuse = ng.get_transform("data_reuse")
    matches_of(program, reuse)
    for pick in (0, 7, 3, 11, 5):
        program = ng.apply(program, reuse, matches_of(program, reuse)[pick])
        assert_reanalysis_is_analysis(program, "data_reuse")
    assert moved and all(moved)  # the updates took the bisection path, and it found every pair


@pytest.mark.parametrize("flatten_min", [1024, 4])
def test_analyses_sharing_their_parents_groups_equal_full_ones(
    monkeypatch: pytest.MonkeyPatch, flatten_min: int
) -> None:
    """Set-pattern groups (and the snapshots' tables) shared with the parent through
    overlays (here on a small program: ``SHARED_FROM`` set to 0; with ``FLATTEN_MIN`` 4
    they are flattened now and then) give the matches a full analysis gives."""
    monkeypatch.setattr(overlay, "SHARED_FROM", 0)
    monkeypatch.setattr(overlay, "FLATTEN_MIN", flatten_min)
    program = tiled_matmul(512, 256, 512)
    for name in INCREMENTAL:
        matches_of(program, ng.get_transform(name))
    for step in range(12):
        transform = ng.get_transform(("data_reuse", "operand_merge", "dead_code")[step % 3])
        matches = matches_of(program, transform)
        if not len(matches):
            continue
        program = ng.apply(program, transform, matches[len(matches) // 2])
        for name in INCREMENTAL:
            assert_reanalysis_is_analysis(program, name)
