"""Scheduled kernels roll: slot indices of rotating buffers that are affine modulo the
pool's count fold into loops (``psum[(i0 + 2) % 4]``), and the rolled kernel computes
what numpy does and profiles exactly as the straight-line kernel of the same plan."""

from __future__ import annotations

import random
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scheduling.schedule_cases import PLAN_CASES, case, inputs, random_schedule, reference, saturated

import nkigym_graph as ng
from nkigym_graph.nki_sim import profile, simulate
from nkigym_graph.nki_sim.errors import NKISimulationError

MODULO = re.compile(r"\[(?:\([^\]]*\)|i\d+) % \d+\]")
"""A slot index printed modulo its pool's count: ``[(i0 + 2) % 4]`` or ``[i1 % 3]``."""

SCHEDULES = [
    ("matmul", 384, 512, 512, "order=N,M,K blocks=M:256 inner=K,M buffers=psum:8"),
    ("matmul", 256, 512, 512, "order=M,N,K blocks=K:256 buffers=load.a:2,load.b:2"),
    ("matmul", 512, 512, 1024, "order=N,K,M blocks=N:512 buffers=psum:6"),
    ("matmul", 512, 512, 512, "order=N,M,K buffers=psum:3,load.b:3"),
    ("bias_relu", 256, 384, 512, "order=N,M,K blocks=K:256 buffers=psum:4"),
    ("chain", 256, 256, 384, "order=N,K,a.1,b.1 blocks=K:256 buffers=psum:3"),
]


def _rolled_and_unrolled(
    program: ng.Program, arrays: dict[str, np.ndarray]
) -> tuple[ng.Artifact, np.ndarray]:
    """The rolled kernel and its output, after checking that it profiles and computes
    exactly as the straight-line kernel of the same plan."""
    args = [arrays[p.name] for p in program.params]
    rolled = ng.emit_artifact(program, backend="nki")
    unrolled = ng.emit_artifact(program, backend="nki", roll_loops=False)
    rolled_profile, unrolled_profile = profile(rolled.text, *args), profile(unrolled.text, *args)
    assert rolled_profile.total_ns == unrolled_profile.total_ns
    assert rolled_profile.instructions == unrolled_profile.instructions
    out = simulate(rolled.text, *args)
    np.testing.assert_array_equal(out, simulate(unrolled.text, *args))
    return rolled, out


@pytest.mark.parametrize("kind,m,k,n,schedule", SCHEDULES, ids=[f"{s[0]}-{s[-1]}" for s in SCHEDULES])
def test_rotating_slots_roll_with_modulo_indices(kind: str, m: int, k: int, n: int, schedule: str) -> None:
    program = saturated(kind, m, k, n).with_schedule(schedule)
    arrays = inputs(kind, m, k, n, seed=5)
    artifact, out = _rolled_and_unrolled(program, arrays)
    want = reference(kind, arrays)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=2e-5 * max(1.0, float(np.abs(want).max())))
    assert MODULO.search(artifact.text), "no slot index rotates within a loop"
    assert artifact.facts["lines"] < artifact.facts["lines_unrolled"]


def test_a_blocked_bf16_kernel_rolls_to_under_half_its_lines() -> None:
    bf16 = np.dtype(ml_dtypes.bfloat16)
    c = case("matmul", 512, 512, 2048)
    program = ng.saturate(ng.tile(c.func, dict(c.shapes), dtype=bf16))
    program = program.with_schedule("order=N,M,K blocks=M:256 buffers=psum:4")
    rng = np.random.default_rng(11)
    arrays = {name: rng.standard_normal(shape).astype(bf16) for name, shape in c.shapes.items()}
    artifact, out = _rolled_and_unrolled(program, arrays)
    want = reference("matmul", arrays)
    assert np.abs(np.asarray(out, np.float64) - want).max() / np.abs(want).max() < 2e-2
    assert MODULO.search(artifact.text)
    assert 2 * artifact.facts["lines"] < artifact.facts["lines_unrolled"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PLAN_CASES), st.integers(0, 2**32 - 1))
def test_random_schedules_roll_into_kernels_that_profile_as_unrolled(case: tuple, seed: int) -> None:
    kind, m, k, n = case
    base = saturated(kind, m, k, n)
    try:
        program = base.with_schedule(random_schedule(base, random.Random(seed)))
        ng.kernel_plan(program)
    except ng.ScheduleError:
        return  # a schedule the target cannot run (tested in test_plans)
    arrays = inputs(kind, m, k, n, seed=seed % 1000)
    args = [arrays[p.name] for p in program.params]
    try:
        profile(ng.emit(program, backend="nki", roll_loops=False), *args)
    except NKISimulationError as refused:  # e.g. more live PSUM tiles than banks
        with pytest.raises(NKISimulationError) as rolled_refused:
            profile(ng.emit(program, backend="nki"), *args)
        assert str(rolled_refused.value) == str(refused)
        return
    _, out = _rolled_and_unrolled(program, arrays)
    want = reference(kind, arrays)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=2e-5 * max(1.0, float(np.abs(want).max())))
