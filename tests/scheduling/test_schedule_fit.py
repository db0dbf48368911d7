"""Schedules that do not fit their program are refused where they are given
(``with_schedule``, a program built or parsed with one), the schedule choices offer only
schedules that fit, and a rewrite keeps what still fits (``nkigym_graph.ir.schedule_fit``)."""

from __future__ import annotations

import pickle
import re

import pytest
from scheduling.schedule_cases import saturated, tiled
from support import example_workloads

import nkigym_graph as ng
from nkigym_graph import ScheduleError
from nkigym_graph.ir.schedule_fit import possible_streams
from nkigym_graph.scheduling.plan import stream_usage


@pytest.mark.parametrize(
    "schedule,order",
    [("ahead=M", "(none)"), ("order=M,N,K ahead=K", "M,N,K"), ("order=N,M,K ahead=N,K", "N,M,K")],
)
def test_a_loop_that_cannot_run_ahead_is_refused_where_given(schedule: str, order: str) -> None:
    """It was accepted and priced (infeasible, as if unscheduled); only the plan refused it."""
    program = saturated("matmul", 256, 256, 1024)
    axis = schedule.rsplit(",", 1)[-1].rsplit("=", 1)[-1]
    message = rf"ahead={axis}: .* must be a loop of order={re.escape(order)} other than the innermost"
    with pytest.raises(ScheduleError, match=message):
        program.with_schedule(schedule)
    text = program.with_schedule("order=N,M,K").to_source().replace("order=N,M,K", schedule)
    with pytest.raises(ng.NkigymError, match=message):
        ng.parse_program(text)


@pytest.mark.parametrize("schedule,order", [("blocks=M:256", "(none)"), ("order=N,K blocks=M:256", "N,K")])
def test_a_block_size_of_an_axis_no_loop_runs_over_is_refused_where_given(schedule: str, order: str) -> None:
    """It was accepted and changed nothing: the kernel plan sizes only the loops of ``order``."""
    program = saturated("matmul", 512, 512, 1024)
    loops = re.escape(order)
    message = rf"blocks=M:256: a block size sizes a block loop, and M is not a loop of order={loops}$"
    with pytest.raises(ScheduleError, match=message):
        program.with_schedule(schedule)


def test_a_loop_order_drops_the_block_size_of_an_axis_it_leaves_out() -> None:
    """``order=N,M,K`` over a single-tile N, with ``blocks=N:512``: every loop order the
    search offers (over the loop axes M and K) leaves N out, and so its block size."""
    program = saturated("matmul", 256, 512, 512).with_schedule("order=N,M,K blocks=N:512,K:256")
    offered = [ng.apply(program, "loop_order", m).schedule for m in ng.analyze(program, "loop_order")]
    assert sorted(map(str, offered)) == ["order=K,M blocks=K:256", "order=M,K blocks=K:256"]


def test_every_loop_order_offered_to_a_schedule_that_runs_ahead_can_run() -> None:
    """``loop_order`` offered the orders with the loop that runs ahead innermost, which
    cannot run (the schedule search priced them infeasible)."""
    program = saturated("matmul", 384, 512, 1024).with_schedule("order=M,N,K ahead=M")
    matches = ng.analyze(program, "loop_order")
    assert len(matches) == 3  # the orders without M innermost, but the current one
    for match in matches:
        scheduled = ng.apply(program, "loop_order", match)
        assert scheduled.schedule is not None and scheduled.schedule.ahead == ("M",)
        assert ng.estimate(scheduled).feasible, scheduled.schedule


def test_a_program_for_a_tenstorrent_target_takes_no_schedule() -> None:
    """Its schedule was accepted, and ignored by the Buda backend and the cost model."""

    def matmul(a, b):  # type: ignore[no-untyped-def]
        return ng.nc_matmul(a, b)

    program = ng.tile(matmul, {"a": (256, 256), "b": (256, 512)}, target=ng.WORMHOLE_B0)
    with pytest.raises(ScheduleError, match=r"target wormhole_b0 \(family tenstorrent\) runs none"):
        program.with_schedule("order=N,M,K")
    assert not ng.analyze(program, "loop_order")
    result = ng.search(program, strategy="schedule", budget=10, seed=0, progress=False, confirm=False)
    assert result.best.schedule is None


def test_blocks_of_a_ragged_axis_are_offered_in_whole_tiles() -> None:
    """An axis of 1000 (tiles of 128 and one of 104) was offered blocks of 208, 416 and
    832: boundaries inside tiles."""
    program = saturated("matmul", 1000, 1000, 1000).with_schedule("order=N,M,K")
    sizes = {
        size
        for match in ng.analyze(program, "block_size")
        if match.edit.schedule is not None
        for axis, size in match.edit.schedule.blocks
        if axis == "M"
    }
    assert sizes == {256, 512, 1000}


def test_a_rewrite_keeps_what_still_fits_and_the_result_round_trips() -> None:
    """Merging N's tiles to 512 leaves ``blocks=N:256`` holding part of a tile: the
    saturated program keeps the rest of its schedule, and prints, parses and pickles."""
    program = tiled("matmul", 256, 256, 1024).with_schedule("order=N,M,K blocks=N:256,M:256 buffers=psum:4")
    merged = ng.saturate(program)
    assert str(merged.schedule) == "order=N,M,K blocks=M:256 buffers=psum:4"
    assert ng.parse_program(merged.to_source()) == merged
    assert pickle.loads(pickle.dumps(merged)) == merged
    assert ng.estimate(merged).feasible


def test_replacing_the_statements_keeps_what_still_fits_and_a_given_schedule_is_checked() -> None:
    program = tiled("matmul", 256, 256, 1024).with_schedule("order=N,M,K blocks=N:256 buffers=psum:4")
    merged = program.replace(statements=saturated("matmul", 256, 256, 1024).statements)
    assert str(merged.schedule) == "order=N,M,K buffers=psum:4"
    with pytest.raises(ScheduleError, match="blocks=N:256: axis N has tiles of 512"):
        merged.replace(schedule="order=N,M,K blocks=N:256")


def test_a_rewrite_drops_buffers_of_a_stream_it_removes() -> None:
    """Joining a two-pass softmax's partial maxima removes their folds (``tensor_tensor``)."""
    workload = example_workloads().WORKLOADS["softmax"]
    program = ng.tile(workload.func, {"x": (256, 1300)})
    assert "tensor_tensor.stat" in possible_streams(program)
    scheduled = program.with_schedule("order=P buffers=tensor_tensor.stat:2,load.x:3")
    merged = ng.saturate(scheduled)
    assert "tensor_tensor.stat" not in possible_streams(merged)
    assert str(merged.schedule) == "order=P buffers=load.x:3"
    assert ng.parse_program(merged.to_source()) == merged


@pytest.mark.parametrize("name", sorted(example_workloads().WORKLOADS))
def test_every_stream_a_kernel_has_is_one_the_program_can_have(name: str) -> None:
    """``possible_streams`` (what ``with_schedule`` accepts) holds every stream of the
    kernel under every loop order, so no schedule the search builds is refused."""
    workload = example_workloads().WORKLOADS[name]
    for online in (False, True):
        base = ng.tile(workload.func, workload.small, dtype=workload.dtype, online=online)
        for program in (base, ng.saturate(base)):
            allowed = possible_streams(program)
            for match in ng.analyze(program, "loop_order"):
                assert set(stream_usage(ng.apply(program, "loop_order", match))) <= allowed
