"""Building blocks of analytic cost models: the list scheduler, liveness, tile dtypes."""

from __future__ import annotations

import random

import pytest

from nkigym_graph.cost import Interval, Task, itemsize, list_schedule, peak_usage, tile_dtypes
from nkigym_graph.cost.liveness import peak_live, peak_live_by
from nkigym_graph.cost.schedule import node_schedule
from nkigym_graph.ir.synthetic import tiled_matmul


def test_independent_engines_overlap() -> None:
    tasks = [Task("dma", 3.0, ()), Task("tensor", 2.0, ()), Task("vector", 1.0, ())]
    assert list_schedule(tasks).seconds == 3.0


def test_one_engine_runs_its_tasks_in_order() -> None:
    tasks = [Task("dma", 3.0, ()), Task("dma", 2.0, ()), Task("tensor", 1.0, (0,))]
    schedule = list_schedule(tasks)
    assert schedule.finish == (3.0, 5.0, 4.0)
    assert schedule.seconds == 5.0
    assert dict(schedule.busy) == {"dma": 5.0, "tensor": 1.0}


def test_dependencies_form_the_critical_path() -> None:
    tasks = [
        Task("dma", 1.0, ()),
        Task("tensor", 2.0, (0,)),
        Task("vector", 1.0, (1,)),
        Task("dma", 1.0, (2,)),
    ]
    assert list_schedule(tasks).seconds == 5.0


def test_a_task_without_engine_only_waits() -> None:
    tasks = [Task("dma", 2.0, ()), Task("", 0.0, (0,)), Task("tensor", 1.0, (1,))]
    assert list_schedule(tasks).finish == (2.0, 2.0, 3.0)


def test_peak_usage_is_the_largest_live_sum_per_buffer() -> None:
    peaks = peak_usage(
        [
            Interval("a", "sbuf", 100, 0, 5),
            Interval("b", "sbuf", 50, 2, 3),
            Interval("c", "sbuf", 70, 4, 6),
            Interval("p", "psum", 2048, 1, 2),
        ]
    )
    assert peaks["sbuf"].bytes == 170 and peaks["sbuf"].node == 4 and peaks["sbuf"].live == ("a", "c")
    assert peaks["psum"].bytes == 2048


def test_a_tile_is_freed_after_its_last_use() -> None:
    peaks = peak_usage([Interval("a", "sbuf", 100, 0, 1), Interval("b", "sbuf", 100, 2, 3)])
    assert peaks["sbuf"].bytes == 100


def test_tile_dtypes_follow_loads_and_fixed_results() -> None:
    program = tiled_matmul(128, 128, 128, dtype="bfloat16")
    dtypes = tile_dtypes(program, {"nc_matmul": "float32"})
    loaded = program[program.statements_of("load")[0]].dst.var
    product = program[program.statements_of("nc_matmul")[0]].dst.var
    assert (dtypes[loaded], dtypes[product], dtypes["output"]) == ("bfloat16", "float32", "bfloat16")


@pytest.mark.parametrize(
    ("dtype", "size"), [("float32", 4), ("bfloat16", 2), ("float8_e4m3fn", 1), ("float64", 8)]
)
def test_itemsize(dtype: str, size: int) -> None:
    assert itemsize(dtype) == size


def _random_tasks(
    rng: random.Random, n: int
) -> tuple[list[str], list[float], list[list[int]], dict[int, list[Task]]]:
    """Statements (engine, seconds, predecessors) and tasks inserted before some of them."""
    engines = [rng.choice(["", "dma", "tensor", "vector", "scalar"]) for _ in range(n)]
    seconds = [rng.choice([0.0, 0.5, 1.0, rng.random()]) for _ in range(n)]
    preds = [rng.sample(range(i), k=min(i, rng.randint(0, 3))) for i in range(n)]
    inserted = {
        i: [Task(rng.choice(["vector", "gpsimd"]), rng.random(), tuple(rng.sample(range(i), k=min(i, 2))))]
        for i in range(n)
        if rng.random() < 0.2
    }
    return engines, seconds, preds, inserted


@pytest.mark.parametrize("seed", range(20))
def test_node_schedule_agrees_with_the_list_scheduler(seed: int) -> None:
    rng = random.Random(seed)
    engines, seconds, preds, inserted = _random_tasks(rng, 60)
    tasks: list[Task] = []
    task_of: list[int] = []
    for node, (engine, cost, deps) in enumerate(zip(engines, seconds, preds, strict=True)):
        before = []
        for task in inserted.get(node, ()):
            tasks.append(Task(task.engine, task.seconds, tuple(task_of[d] for d in task.deps)))
            before.append(len(tasks) - 1)
        task_of.append(len(tasks))
        tasks.append(Task(engine, cost, (*(task_of[d] for d in deps), *before)))
    expected = list_schedule(tasks)
    names = ["", *dict.fromkeys(e for e in engines if e)]
    # data and ordering edges as a program keeps them: (source, label) pairs, split in two
    data = [[(d, "x") for d in deps[::2]] for deps in preds]
    order = [[(d, "y") for d in deps[1::2]] for deps in preds]
    got = node_schedule([names.index(e) for e in engines], names, seconds, data, order, inserted)
    assert got.seconds == expected.seconds
    assert list(got.busy.items()) == list(expected.busy.items())  # same sums, same order
    assert got.finish == tuple(expected.finish[t] for t in task_of)


@pytest.mark.parametrize("seed", range(20))
def test_peak_live_agrees_with_a_sweep(seed: int) -> None:
    rng = random.Random(seed)
    spans = [(s, s + rng.randint(0, 6), rng.choice([0, 64, 128, 512])) for s in range(rng.randint(0, 40))]
    live = [sum(b for s, e, b in spans if s <= node <= e) for node in range(50)]
    best = max(live, default=0)
    starts, ends, sizes = ([span[i] for span in spans] for i in range(3))
    assert peak_live(starts, ends, sizes) == ((best, live.index(best)) if spans else (0, 0))
    intervals = [Interval(f"t{i}", "sbuf", b, s, e) for i, (s, e, b) in enumerate(spans)]
    if spans:
        peak = peak_usage(intervals)["sbuf"]
        assert (peak.bytes, peak.node) == (best, live.index(best))
        assert len(peak.live) == sum(1 for s, e, _ in spans if s <= peak.node <= e)


@pytest.mark.parametrize("seed", range(20))
def test_peak_live_by_group_is_peak_live_of_each_group(seed: int) -> None:
    rng = random.Random(seed)
    spans = [(s, s + rng.randint(0, 6), rng.choice([0, 64, 128, 512])) for s in range(rng.randint(0, 40))]
    groups = [rng.randrange(3) for _ in spans]
    starts, ends, sizes = ([span[i] for span in spans] for i in range(3))
    got = peak_live_by(starts, ends, sizes, groups, 3)
    for group in range(3):
        held = [i for i, g in enumerate(groups) if g == group]
        if not held:
            assert got[group] is None
        else:
            assert got[group] == peak_live(
                [starts[i] for i in held], [ends[i] for i in held], [sizes[i] for i in held]
            )
