"""Building blocks of analytic cost models: the list scheduler, liveness, tile dtypes."""

from __future__ import annotations

import pytest

from nkigym_graph.cost import Interval, Task, itemsize, list_schedule, peak_usage, tile_dtypes
from nkigym_graph.synthetic import tiled_matmul


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
    loaded = program.statements[program.statements_of("load")[0]].dst.var
    product = program.statements[program.statements_of("nc_matmul")[0]].dst.var
    assert (dtypes[loaded], dtypes[product], dtypes["output"]) == ("bfloat16", "float32", "bfloat16")


@pytest.mark.parametrize(
    ("dtype", "size"), [("float32", 4), ("bfloat16", 2), ("float8_e4m3fn", 1), ("float64", 8)]
)
def test_itemsize(dtype: str, size: int) -> None:
    assert itemsize(dtype) == size
