"""``search(seconds=...)``: a wall-clock limit returns the best state found so far,
verified in full, and says that time stopped it; a limit that never passes changes
nothing."""

from __future__ import annotations

import numpy as np
import pytest

import nkigym_graph as ng
import nkigym_graph.search.run as run_module
import nkigym_graph.search.session as session_module
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.search import search
from nkigym_graph.search.replay import replay

ROOT = tiled_matmul(256, 256, 512)


class _Clock:
    """A clock that advances one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize(("strategy", "options"), [("greedy", {}), ("beam", {"width": 2}), ("random", {})])
def test_a_limit_already_passed_returns_the_root(strategy: str, options: dict) -> None:
    result = search(ROOT, strategy=strategy, seconds=1e-9, confirm=False, **options)
    assert result.stats.stopped == "time"
    assert "stopped by the time limit" in str(result.stats)
    assert result.stats.states == 1 and result.path == []
    assert result.best.canonical_hash == ROOT.canonical_hash


@pytest.mark.parametrize(("strategy", "options"), [("greedy", {}), ("random", {"budget": 12})])
def test_a_limit_that_never_passes_changes_nothing(strategy: str, options: dict) -> None:
    free = search(ROOT, strategy=strategy, confirm=False, **options)
    limited = search(ROOT, strategy=strategy, seconds=3600, confirm=False, **options)
    assert limited.best.canonical_hash == free.best.canonical_hash
    assert limited.stats.states == free.stats.states and limited.collected == free.collected
    assert limited.stats.stopped == free.stats.stopped == ("done" if strategy == "greedy" else "budget")


def test_a_limit_passing_mid_search_keeps_the_best_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    free = search(ROOT, strategy="beam", width=2, confirm=False)
    clock = _Clock()
    monkeypatch.setattr(run_module, "time", clock)
    monkeypatch.setattr(session_module, "time", clock)
    expansions: list[tuple[int, int]] = []  # (candidates offered, states returned)
    expand_pairs = session_module.Session.expand_pairs

    def recorded(self, pairs):  # type: ignore[no-untyped-def]
        children = expand_pairs(self, pairs)
        expansions.append((len(pairs), len(children)))
        return children

    monkeypatch.setattr(session_module.Session, "expand_pairs", recorded)
    limited = search(ROOT, strategy="beam", width=2, seconds=3.5, confirm=False)
    assert limited.stats.stopped == "time"
    # the last expansion stopped between its candidates, after evaluating the first
    assert expansions and 1 <= expansions[-1][1] < expansions[-1][0]
    assert all(offered == returned for offered, returned in expansions[:-1])
    assert 1 < limited.stats.states < free.stats.states
    assert limited.cost.seconds < limited.root_cost.seconds  # it got somewhere
    assert limited.stats.fully_verified >= 1  # the best is checked on every element
    assert replay(ROOT, limited.path) == limited.best
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(tuple(p.shape)) for p in ROOT.params)
    got = ng.interpret(limited.best, dtype=np.float64, a=a, b=b)
    np.testing.assert_allclose(got, a.T @ b, rtol=1e-10, atol=1e-10)


def test_with_an_executor_the_limit_stops_between_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """An executor evaluated a whole expansion before the limit was looked at (an
    exhaustive search at 1024^3 took 30 s under a 0.5 s limit): it now runs rounds of
    twice as many candidates as it has workers, and stops between them."""
    from concurrent.futures import ThreadPoolExecutor

    big = tiled_matmul(1024, 1024, 1024)
    clock = _Clock()
    monkeypatch.setattr(run_module, "time", clock)
    monkeypatch.setattr(session_module, "time", clock)
    rounds: list[int] = []
    run_ordered = session_module.run_ordered

    def recorded(executor, function, tasks):  # type: ignore[no-untyped-def]
        rounds.append(len(tasks))
        return run_ordered(executor, function, tasks)

    monkeypatch.setattr(session_module, "run_ordered", recorded)
    with ThreadPoolExecutor(max_workers=2) as pool:
        limited = search(big, strategy="exhaustive", seconds=4.5, executor=pool, confirm=False)
    assert limited.stats.stopped == "time"
    assert rounds and max(rounds) <= 4  # two workers: rounds of four candidates
    assert limited.stats.states <= 1 + sum(rounds)
    assert replay(big, limited.path) == limited.best
