"""Search strategies on small tiled matmuls: they find a program at least as good as the
saturated one (at 256^3 a partly merged program is better: its small transfers overlap
their fixed latencies, by the cost model and by the profile of the emitted kernels
alike), random searches repeat exactly for a seed, and every path replays."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from workload_functions import softmax

import nkigym_graph as ng
from nkigym_graph.cost import estimate
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.ir.targets import TRN2
from nkigym_graph.search import STRATEGIES, SearchError, replay, search
from nkigym_graph.search.replay import path_steps

TRANSFORMS = ("data_reuse", "operand_merge", "dead_code")
ROOT = tiled_matmul(256, 256, 256)
SATURATED = ng.saturate(ROOT, list(TRANSFORMS))
SATURATED_RANK = estimate(SATURATED).rank


def _best_of_graph(result: object) -> tuple[int, int, int]:
    return min(data["state"].cost.rank for _, data in result.graph.nodes(data=True))  # type: ignore[attr-defined]


def _numpy_check(program: ng.Program, seed: int = 5) -> None:
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(tuple(p.shape)) for p in program.params)
    np.testing.assert_allclose(
        ng.interpret(program, dtype=np.float64, a=a, b=b), a.T @ b, rtol=1e-10, atol=1e-10
    )


def test_greedy_finds_the_saturated_program() -> None:
    result = search(ROOT, TRANSFORMS, strategy="greedy")
    assert result.cost.rank <= SATURATED_RANK
    assert result.cost.seconds < result.root_cost.seconds
    assert result.cost.feasible
    _numpy_check(result.best)


def test_greedy_one_match_at_a_time_finds_it_too() -> None:
    result = search(ROOT, TRANSFORMS, strategy="greedy", batch=False)
    assert result.cost.rank <= SATURATED_RANK
    assert len(result.path) <= result.stats.max_depth  # one match per step (the last may not improve)


def test_exhaustive_over_batches_finds_the_saturated_program() -> None:
    result = search(ROOT, TRANSFORMS, strategy="exhaustive", batch=True)
    assert result.cost.rank <= SATURATED_RANK
    assert result.cost.rank == _best_of_graph(result)
    assert result.stats.states < STRATEGIES["exhaustive"].budget  # the space was exhausted


def reachable(root: ng.Program, transforms: tuple[str, ...]) -> set[str]:
    """Hashes of every program single rewrites reach from ``root`` (plain breadth-first)."""
    seen = {root.canonical_hash}
    frontier = [root]
    while frontier:
        program = frontier.pop()
        for name in transforms:
            for match in ng.get_transform(name).analyze(program):
                child = ng.apply(program, name, match)
                if child.canonical_hash not in seen:
                    seen.add(child.canonical_hash)
                    frontier.append(child)
    return seen


def test_exhaustive_over_single_matches_finds_the_best_of_the_whole_space() -> None:
    root = tiled_matmul(256, 128, 256)
    result = search(root, TRANSFORMS, strategy="exhaustive", budget=1000)
    assert set(result.graph.nodes) == reachable(root, TRANSFORMS)  # every program, each once
    assert result.cost.rank <= estimate(ng.saturate(root, list(TRANSFORMS))).rank
    ranks = sorted(data["state"].cost.rank for _, data in result.graph.nodes(data=True))
    assert ranks[0] == result.cost.rank


@pytest.mark.slow
def test_exhaustive_over_the_whole_2x2_space_finds_the_saturated_program() -> None:
    budget = 100_000
    result = search(ROOT, TRANSFORMS, strategy="exhaustive", budget=budget)
    assert result.stats.states < budget  # the space was exhausted
    assert result.cost.rank <= SATURATED_RANK


def test_beam_finds_the_saturated_program() -> None:
    result = search(ROOT, TRANSFORMS, strategy="beam", width=2)
    assert result.cost.rank <= SATURATED_RANK


def test_seeded_random_searches_repeat_exactly() -> None:
    first = search(ROOT, TRANSFORMS, strategy="random", budget=25, seed=7)
    again = search(ROOT, TRANSFORMS, strategy="random", budget=25, seed=7)
    assert first.collected == again.collected
    assert list(first.graph.nodes) == list(again.graph.nodes)
    assert first.best.canonical_hash == again.best.canonical_hash
    assert [(n, m.nodes, m.detail) for n, m in first.path] == [(n, m.nodes, m.detail) for n, m in again.path]
    other = search(ROOT, TRANSFORMS, strategy="random", budget=25, seed=8)
    assert other.collected != first.collected


def test_random_collects_distinct_states_at_the_minimum_depth() -> None:
    result = search(ROOT, TRANSFORMS, strategy="random", budget=12, seed=1, min_depth=4)
    assert len(result.collected) == len(set(result.collected)) == result.stats.collected == 12
    depths = [result.graph.nodes[key]["state"].depth for key in result.collected]
    assert min(depths) >= 4
    _numpy_check(result.best)


def test_the_budget_bounds_the_states() -> None:
    result = search(ROOT, TRANSFORMS, strategy="exhaustive", budget=30)
    assert result.stats.states == 30
    assert result.stats.verified == 29  # every state but the root


@pytest.mark.parametrize(
    ("strategy", "options"),
    [("greedy", {}), ("beam", {"width": 3}), ("exhaustive", {"budget": 40}), ("random", {"budget": 15})],
)
def test_every_path_replays_to_the_best(strategy: str, options: dict) -> None:
    result = search(ROOT, TRANSFORMS, strategy=strategy, seed=2, **options)
    assert replay(ROOT, result.path).canonical_hash == result.best.canonical_hash
    assert all(name in TRANSFORMS for name, _ in result.path)


def test_replay_refuses_a_path_found_in_another_program() -> None:
    result = search(ROOT, TRANSFORMS, strategy="greedy")
    with pytest.raises(SearchError, match=r"replay step 1 .* found in program"):
        replay(tiled_matmul(256, 256, 384), result.path)


def test_the_result_reports_modeled_costs_and_statistics() -> None:
    result = search(ROOT, TRANSFORMS, strategy="greedy")
    text = str(result)
    assert "greedy search" in text and "modeled, not measured" in text
    assert result.speedup > 1
    assert result.stats.fully_verified >= 1 and result.stats.seconds > 0
    state = result.graph.nodes[result.best.canonical_hash]["state"]
    assert state.checked == "full" and state.cost == result.cost


def test_greedy_and_beam_back_off_to_the_part_of_a_batch_that_fits() -> None:
    tiny = dataclasses.replace(TRN2, name="tiny_sbuf", sbuf_bytes_per_partition=3 * 1024)
    root = tiled_matmul(256, 256, 512, target=tiny)
    assert not estimate(ng.saturate(root, ["data_reuse"])).feasible  # the whole batch overflows SBUF
    for strategy in ("greedy", "beam"):
        result = search(root, TRANSFORMS, strategy=strategy)
        assert result.cost.feasible and result.speedup > 1.3
        first = path_steps(result.path)[0]
        assert first.transform == "data_reuse" and len(first.matches) < len(ng.analyze(root, "data_reuse"))
        assert replay(root, result.path).canonical_hash == result.best.canonical_hash
        _numpy_check(result.best)


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_search_walks_to_the_joint_fixpoint_when_no_single_transform_pays(strategy: str) -> None:
    # a softmax over 2048-column rows: merging the reductions along the row pays only
    # with the element-wise tail merged to match, which no single transform's batch or
    # fixpoint does; the search then walks to the fixpoint of all transforms together
    root = ng.tile(softmax, {"x": (256, 2048)})
    saturated = ng.saturate(root)
    result = search(root, strategy=strategy)
    assert result.cost.rank <= estimate(saturated).rank
    used = {name for name, _ in result.path}
    assert {"reduction_merge", "operand_merge"} <= used
    assert ng.replay(root, result.path).canonical_hash == result.best.canonical_hash
    x = np.random.default_rng(3).standard_normal((256, 2048))
    want = np.exp(x - x.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ng.interpret(result.best, dtype=np.float64, x=x), want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    ("strategy", "options"),
    [
        ("greedy", {"batch": False}),
        ("greedy", {}),
        ("beam", {}),
        ("beam", {"batch": False}),
        ("schedule", {}),
    ],
)
@pytest.mark.parametrize("budget", [1, 2, 5])
def test_the_budget_bounds_the_states_of_every_strategy(strategy: str, options: dict, budget: int) -> None:
    """``budget`` is the most distinct states a search creates: a strategy that expands all
    of a state's candidates at once stops recording them at the budget (greedy with single
    matches made 33 states of a budget of 2)."""
    result = search(ROOT, strategy=strategy, budget=budget, confirm=False, **options)
    assert result.stats.states <= budget
    assert replay(ROOT, result.path).canonical_hash == result.best.canonical_hash


def test_random_max_depth_bounds_the_depth_and_must_not_be_above_min_depth() -> None:
    """States at ``max_depth`` are not expanded: 0 keeps the root alone (it made depth-1
    states, as 1 does); a ``min_depth`` past ``max_depth`` could collect nothing (it
    explored every state up to ``max_depth`` and returned none collected)."""
    for max_depth in (0, 1, 2):
        result = search(ROOT, TRANSFORMS, strategy="random", budget=20, max_depth=max_depth, confirm=False)
        assert result.stats.max_depth == max_depth
    with pytest.raises(SearchError, match=r"min_depth=3 is deeper than max_depth=2"):
        search(ROOT, TRANSFORMS, strategy="random", budget=5, min_depth=3, max_depth=2)


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_the_joint_fixpoint_skips_choices_that_do_not_saturate(strategy: str) -> None:
    """A schedule choice (``buffer_count``) has no fixpoint: its alternatives cycle
    through known states, which use no budget, and the walk to the joint fixpoint never
    ended (this search ran until its time limit)."""

    def mlp(x_t, w1, b1, w2):  # type: ignore[no-untyped-def]
        hidden = ng.activation(ng.nc_matmul(w1, x_t), op="gelu", bias=b1)
        return ng.nc_matmul(hidden, w2)

    program = ng.tile(mlp, {"x_t": (160, 200), "w1": (160, 300), "b1": (300, 1), "w2": (300, 130)})
    result = search(
        program, ["buffer_count", "data_reuse"], strategy=strategy, budget=30, seconds=20, confirm=False
    )
    assert result.stats.stopped == "done"
    assert replay(program, result.path).canonical_hash == result.best.canonical_hash
