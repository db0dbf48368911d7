"""The array solver of a flattened task graph gives the list scheduler's finish times,
bit for bit, from any hints (good, wrong or random)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nkigym_graph.cost import critical_path
from nkigym_graph.cost.critical_path import by_queue, critical, run, solve
from nkigym_graph.cost.schedule import Task, list_schedule


def _graph(seed: int, tasks: int) -> tuple[list[Task], np.ndarray, np.ndarray, np.ndarray]:
    """Random tasks on three engines and none, each waiting on up to three earlier
    tasks (``Task``s in schedule order), and as the solver takes them (numbered queue by
    queue): the schedule place of each, seconds (not round numbers: additions round)
    and preds."""
    rng = np.random.default_rng(seed)
    queue = rng.integers(0, 4, tasks)
    seconds = rng.random(tasks) * rng.choice([1e-7, 1e-6, 3.3e-6], tasks)
    deps = [
        tuple(sorted({int(d) for d in rng.integers(0, t, rng.integers(0, 4))})) if t else ()
        for t in range(tasks)
    ]
    names = ["", "dma", "tensor", "vector"]
    listed = [Task(names[q], s, d) for q, s, d in zip(queue.tolist(), seconds.tolist(), deps, strict=True)]
    order, prev = by_queue(queue)
    number = np.empty(tasks + 1, dtype=np.int64)
    number[order] = np.arange(tasks)
    number[tasks] = -1
    preds = np.full((4, tasks), -1, dtype=np.int64)
    preds[0] = prev
    for t, place in enumerate(order.tolist()):
        preds[1 : 1 + len(deps[place]), t] = number[list(deps[place])]
    return listed, order, seconds[order], preds


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 400), st.sampled_from(["zero", "random", "exact"]))
def test_solve_gives_the_list_schedule_from_any_hints(seed: int, tasks: int, hints: str) -> None:
    listed, order, seconds, preds = _graph(seed, tasks)
    expected = np.array(list_schedule(listed).finish, dtype=np.float64)[order]
    schedule = np.empty(tasks, dtype=np.int64)
    schedule[order] = np.arange(tasks)
    assert np.array_equal(run(preds, seconds, schedule.tolist()), expected)
    hint = {
        "zero": np.zeros(tasks, dtype=np.int64),
        "random": np.random.default_rng(seed + 1).integers(0, 4, tasks),
        "exact": critical(preds, expected),
    }[hints]
    finish, found = solve(seconds, preds, hint, order)
    assert np.array_equal(finish, expected)
    assert np.array_equal(np.append(finish, 0.0)[preds[found, np.arange(tasks)]] + seconds, finish)


@pytest.mark.parametrize("repairs", [0, 1])
def test_the_loop_takes_over_from_the_first_wrong_task(monkeypatch: pytest.MonkeyPatch, repairs: int) -> None:
    monkeypatch.setattr(critical_path, "REPAIRS", repairs)
    listed, order, seconds, preds = _graph(3, 500)
    finish, _ = solve(seconds, preds, np.zeros(500, dtype=np.int64), order)
    assert np.array_equal(finish, np.array(list_schedule(listed).finish)[order])


def test_hints_of_a_similar_graph_need_no_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long saturated queue feeding another: hints from the graph with one task less."""
    listed, order, seconds, preds = _graph(7, 3000)
    hint = critical(preds, np.array(list_schedule(listed).finish)[order])
    listed[1500] = listed[1500]._replace(seconds=listed[1500].seconds / 2)  # every later time moves
    seconds = np.array([task.seconds for task in listed])[order]
    monkeypatch.setattr(critical_path, "run", None)  # no loop
    finish, _ = solve(seconds, preds, hint, order)
    assert np.array_equal(finish, np.array(list_schedule(listed).finish)[order])
