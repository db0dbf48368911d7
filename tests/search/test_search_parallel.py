"""Parallel evaluation through concurrent.futures: identical results with and without an
executor, programs and matches travel by value."""

from __future__ import annotations

import os
import pickle
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

import nkigym_graph as ng
from nkigym_graph.cost import estimate
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.search import SearchResult, search

ROOT = tiled_matmul(256, 256, 256)


def _same(a: SearchResult, b: SearchResult) -> None:
    assert a.best.canonical_hash == b.best.canonical_hash
    assert [(n, m.nodes, m.detail, m.program_hash) for n, m in a.path] == [
        (n, m.nodes, m.detail, m.program_hash) for n, m in b.path
    ]
    assert a.collected == b.collected
    assert list(a.graph.nodes) == list(b.graph.nodes)
    assert a.cost == b.cost
    sa, sb = a.stats, b.stats
    assert (sa.states, sa.duplicates, sa.verified, sa.expansions) == (
        sb.states,
        sb.duplicates,
        sb.verified,
        sb.expansions,
    )


def test_programs_matches_and_reports_pickle_by_value() -> None:
    program = ng.saturate(ROOT, ["data_reuse"])
    again = pickle.loads(pickle.dumps(program))
    assert again.canonical_hash == program.canonical_hash and again is not program
    import nkigym_graph.search.remote  # noqa: F401  (makes edits picklable)

    matches = ng.analyze(program, "operand_merge")
    copied = pickle.loads(pickle.dumps(matches))
    assert ng.apply(program, "operand_merge", copied[0]) == ng.apply(program, "operand_merge", matches[0])
    report = estimate(program)
    assert pickle.loads(pickle.dumps(report)) == report


def test_a_process_pool_gives_identical_results() -> None:
    alone = search(ROOT, strategy="random", budget=24, seed=5)
    with ProcessPoolExecutor(max_workers=2) as pool:
        pooled = search(ROOT, strategy="random", budget=24, seed=5, executor=pool)
    _same(alone, pooled)


def test_workers_make_a_process_pool_with_identical_results() -> None:
    _same(search(ROOT, strategy="beam", width=3), search(ROOT, strategy="beam", width=3, workers=2))


def test_any_executor_works() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = search(ROOT, strategy="greedy", batch=False, executor=pool)
    _same(search(ROOT, strategy="greedy", batch=False), threaded)


def test_a_dask_executor_works_if_dask_is_installed() -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.Client(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None
    ) as client:
        dasked = search(ROOT, strategy="greedy", executor=client.get_executor())
    _same(search(ROOT, strategy="greedy"), dasked)


def test_a_saturating_candidate_started_from_its_twin_equals_one_derived_alone(monkeypatch) -> None:
    """In this process a saturating batch candidate starts from the program its plain twin
    (same matches, same state) derived; through an executor each is derived by itself:
    the searches agree."""
    import nkigym_graph.search.remote as remote

    started: list[bool] = []
    derive = remote.derive

    def spy(program, transform, matches, saturate=False, first=None):
        started.append(first is not None)
        return derive(program, transform, matches, saturate, first)

    monkeypatch.setattr(remote, "derive", spy)
    alone = search(ROOT, strategy="greedy")
    assert any(started)  # the twin's program was used
    with ThreadPoolExecutor(max_workers=2) as pool:
        _same(alone, search(ROOT, strategy="greedy", executor=pool))


def test_workers_with_an_executor_given_is_an_error_not_ignored() -> None:
    """``workers=N`` sizes the process pool ``search`` makes; with an ``Executor`` given it
    was silently ignored."""
    with (
        ThreadPoolExecutor(max_workers=1) as pool,
        pytest.raises(ng.SearchError, match="workers=2 makes a process pool"),
    ):
        search(ROOT, executor=pool, workers=2, confirm=False)


def test_workers_beyond_a_few_per_cpu_are_refused_before_any_process_starts() -> None:
    """``workers=10**6`` forked processes until the machine ran out of memory."""
    most = 4 * (os.cpu_count() or 1)
    with pytest.raises(ng.SearchError, match=rf"workers={most + 1} is more than {most} \(4 per CPU"):
        search(ROOT, workers=most + 1, confirm=False)


@pytest.mark.parametrize(
    ("strategy", "options"), [("greedy", {"batch": False}), ("beam", {}), ("schedule", {})]
)
def test_a_budget_stops_the_search_at_the_same_state_with_an_executor(strategy: str, options: dict) -> None:
    alone = search(ROOT, strategy=strategy, budget=7, confirm=False, **options)
    with ThreadPoolExecutor(max_workers=2) as pool:
        pooled = search(ROOT, strategy=strategy, budget=7, confirm=False, executor=pool, **options)
    assert alone.stats.states == 7
    _same(alone, pooled)
