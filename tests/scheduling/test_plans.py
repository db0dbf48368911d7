"""Kernel plans run by an executor of their own (one numpy array per buffer slot, every
read checked against what the slot holds) equal numpy, for random loop orders, block
sizes (ragged ones included), inner orders and buffer counts; schedules the target cannot
run are refused with the stream and the limit."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scheduling.plan_executor import PlanExecutionError, execute_plan
from scheduling.schedule_cases import PLAN_CASES, inputs, random_schedule, reference, saturated, tiled

import nkigym_graph as ng
from nkigym_graph import ScheduleError, kernel_plan
from nkigym_graph.ir.targets import TRN2


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


@pytest.mark.parametrize("blocks", ["M:100", "K:200", "N:300", "M:100,K:100,N:100"])
def test_blocks_that_cut_tiles_are_ragged_and_exact(blocks: str) -> None:
    """A block size that is no multiple of the tile cuts tiles at block edges."""
    program = saturated("matmul", 384, 512, 384).with_schedule(f"order=N,M,K blocks={blocks}")
    plan = _check_plan("matmul", 384, 512, 384, program)
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


def test_buffers_for_a_stream_the_kernel_lacks_are_refused() -> None:
    program = saturated("matmul", 256, 256, 512).with_schedule("buffers=bogus:2")
    with pytest.raises(ScheduleError, match=r"'bogus'.*its streams: evict, load.a, load.b, psum"):
        kernel_plan(program)


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
    scheduled = program.with_schedule("order=N,M,K blocks=N:256")
    assert kernel_plan(scheduled) is kernel_plan(scheduled)
    assert program.schedule is None and scheduled.schedule == ng.Schedule.parse("order=N,M,K blocks=N:256")
    assert kernel_plan(scheduled).source is scheduled
