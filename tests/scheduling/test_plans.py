"""Kernel plans run by an executor of their own (one numpy array per buffer slot, every
read checked against what the slot holds) equal numpy, for random loop orders, block
sizes (ragged axes included), inner orders and buffer counts; schedules the target cannot
run are refused with the stream and the limit, schedules that do not fit the program
(blocks of part of a tile, streams it has not) where they are given."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scheduling.plan_executor import PlanExecutionError, execute_plan
from scheduling.schedule_cases import PLAN_CASES, inputs, random_schedule, reference, saturated, tiled
from support import example_workloads

import nkigym_graph as ng
from nkigym_graph import ScheduleError, kernel_plan
from nkigym_graph.ir.targets import TRN2
from nkigym_graph.scheduling.loops import loop_axes


def _check_plan(kind: str, m: int, k: int, n: int, program: ng.Program) -> ng.KernelPlan | None:
    """Run ``program``'s plan on random inputs and compare with numpy; None when refused."""
    try:
        plan = kernel_plan(program)
    except ScheduleError as error:
        assert any(word in str(error) for word in ("stream", "overflows", "buffers")), str(error)
        return None
    arrays = inputs(kind, m, k, n)
    result = execute_plan(plan, arrays)
    np.testing.assert_allclose(result[program.returns[0]], reference(kind, arrays), rtol=1e-9, atol=1e-9)
    return plan


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PLAN_CASES), st.booleans(), st.integers(0, 2**32 - 1))
def test_random_schedules_run_equal_to_numpy(case: tuple, saturate: bool, seed: int) -> None:
    kind, m, k, n = case
    base = saturated(kind, m, k, n) if saturate else tiled(kind, m, k, n)
    schedule = random_schedule(base, random.Random(seed))
    plan = _check_plan(kind, m, k, n, base.with_schedule(schedule))
    if plan is not None:
        for stream, count in schedule.buffers:
            assert plan.streams[stream].buffers == count


@pytest.mark.parametrize("kind,m,k,n", PLAN_CASES)
def test_the_default_schedule_runs_equal_to_numpy(kind: str, m: int, k: int, n: int) -> None:
    program = saturated(kind, m, k, n)
    plan = _check_plan(kind, m, k, n, program)
    assert plan is not None, "the default schedule must fit on chip"
    assert plan.schedule == ng.Schedule()


@pytest.mark.parametrize(
    "blocks,message",
    [
        ("M:100", r"blocks=M:100: axis M has tiles of 128, .* a multiple of 128 .* or the whole axis \(384"),
        ("K:200", r"blocks=K:200: axis K has tiles of 128, .* or the whole axis \(512 or more\)"),
        ("N:300", r"blocks=N:300: axis N has tiles of 384, .* a multiple of 384"),
        ("M:128,K:100", r"blocks=K:100: axis K has tiles of 128"),
    ],
)
def test_blocks_of_part_of_a_tile_are_refused_naming_the_axis_its_tile_and_the_rule(
    blocks: str, message: str
) -> None:
    """A block boundary inside a tile was accepted: a statement falls in the block its
    start falls in, so ``M:100`` ran as one tile per block with no load cut at a block
    boundary (a load's readers straddle 100, 200, ...) and ``K:200`` grouped uneven
    tiles; the schedule said what the kernel did not do."""
    program = saturated("matmul", 384, 512, 384)
    with pytest.raises(ScheduleError, match=message):
        program.with_schedule(f"order=N,M,K blocks={blocks}")
    text = program.with_schedule("order=N,M,K").to_source()
    text = text.replace("order=N,M,K", f"order=N,M,K blocks={blocks}")
    with pytest.raises(ng.NkigymError, match=message):
        ng.parse_program(text)


@pytest.mark.parametrize("blocks", ["M:256", "K:256", "M:256,K:128", "M:300,K:1000"])
def test_blocks_of_a_ragged_axis_hold_whole_tiles_and_are_exact(blocks: str) -> None:
    """An axis of 300 has tiles of 128 and a last one of 44: its tile is 128 (it was 44,
    the smallest extent, so blocks of 88 or 176 put boundaries inside tiles)."""
    program = saturated("matmul", 300, 260, 200)
    assert loop_axes(program) == {"K": 128, "M": 128}
    plan = _check_plan("matmul", 300, 260, 200, program.with_schedule(f"order=M,K blocks={blocks}"))
    assert plan is not None


def test_one_load_buffer_reloads_what_it_dropped_and_stays_exact() -> None:
    program = saturated("matmul", 256, 256, 512).with_schedule("buffers=load.a:1")
    plan = _check_plan("matmul", 256, 256, 512, program)
    assert plan is not None and plan.streams["load.a"].buffers == 1
    assert plan.reloads > 0
    assert sum(step.reload for step in plan.steps) == plan.reloads


def test_more_psum_buffers_than_banks_is_refused_with_the_limit() -> None:
    banks = TRN2.psum_bytes_per_partition // 2048
    program = saturated("matmul", 256, 256, 512).with_schedule(f"buffers=psum:{banks + 1}")
    with pytest.raises(ScheduleError, match=r"PSUM overflows on trn2: \d+ bytes per partition > \d+"):
        kernel_plan(program)
    assert kernel_plan(program, overflowing=True).overflow is not None


def test_too_few_accumulators_are_refused_naming_the_stream() -> None:
    program = saturated("matmul", 256, 256, 1024).with_schedule("order=N,K,M blocks=N:512 buffers=psum:1")
    with pytest.raises(ScheduleError, match=r"stream 'psum' needs more than 1 buffers"):
        kernel_plan(program)


@pytest.mark.parametrize("stream", ["bogus", "load.c", "psum.bfloat16", "psum.float32", "activation"])
def test_buffers_for_a_stream_no_kernel_of_the_program_has_are_refused_where_given(stream: str) -> None:
    """They were accepted, and ``estimate`` priced the program (infeasible, as if it had
    no schedule); only ``kernel_plan`` and ``emit`` refused them."""
    program = saturated("matmul", 256, 256, 512)
    streams = "evict, load.a, load.b, psum"
    message = rf"'{stream}', which no kernel of this program has \(the streams it can have: {streams}\)"
    with pytest.raises(ScheduleError, match=message):
        program.with_schedule(f"buffers={stream}:2")
    with pytest.raises(ScheduleError, match=message):
        program.replace(schedule=f"buffers={stream}:2")
    text = program.with_schedule("buffers=psum:2").to_source().replace("psum:2", f"{stream}:2")
    with pytest.raises(ng.NkigymError, match=message):
        ng.parse_program(text)


def test_a_stream_this_loop_order_computes_in_place_is_refused_by_the_plan() -> None:
    """A stream the program can have but its kernel does not (its tiles are computed in
    their source's buffer) is accepted by ``with_schedule``; the plan refuses it naming
    the kernel's streams, and the cost model says so."""
    workload = example_workloads().WORKLOADS["rmsnorm"]
    program = ng.saturate(ng.tile(workload.func, workload.small)).with_schedule("buffers=activation.stat:2")
    with pytest.raises(ScheduleError, match=r"'activation.stat', which this program's kernel does not have"):
        kernel_plan(program)
    report = ng.estimate(program)
    assert not report.feasible and "activation.stat" in report.reason


def test_the_executor_catches_a_plan_that_overwrites_a_live_tile() -> None:
    """The executor is a real check: one step pointed at another variable's slot fails."""
    program = saturated("matmul", 256, 256, 512).with_schedule("order=N,M,K")
    plan = kernel_plan(program)
    loads = [i for i, step in enumerate(plan.steps) if plan.program[step.node].op.name == "load"]
    first, second = loads[0], loads[1]
    steps = list(plan.steps)
    victim_slot = steps[first].slots[0][1]
    var, _ = steps[second].slots[0]
    steps[second] = steps[second]._replace(slots=((var, victim_slot),))
    broken = plan._replace(steps=tuple(steps))
    with pytest.raises(PlanExecutionError):
        execute_plan(broken, inputs("matmul", 256, 256, 512))


def test_plans_are_values_of_their_snapshot() -> None:
    program = saturated("matmul", 256, 256, 512)
    scheduled = program.with_schedule("order=N,M,K blocks=M:128")
    assert kernel_plan(scheduled) is kernel_plan(scheduled)
    assert program.schedule is None and scheduled.schedule == ng.Schedule.parse("order=N,M,K blocks=M:128")
    assert kernel_plan(scheduled).source is scheduled
