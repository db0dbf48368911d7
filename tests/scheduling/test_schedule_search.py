"""Schedule choices as transforms (alternatives of one structure), refused by saturation,
explored by the ``schedule`` search strategy, and two-level K accumulation (``rfactor``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from scheduling.schedule_cases import case, inputs, reference, saturated

import nkigym_graph as ng
from nkigym_graph.nki_sim import simulate

BF16 = np.dtype(ml_dtypes.bfloat16)
CHOICES = ["loop_order", "inner_order", "block_size", "buffer_count"]


@pytest.mark.parametrize("name", CHOICES)
def test_every_choice_keeps_the_statements_and_changes_the_schedule(name: str) -> None:
    program = saturated("matmul", 256, 256, 512).with_schedule("order=N,M,K")
    transform = ng.get_transform(name)
    matches = transform.analyze(program)
    assert matches, f"{name} offers no choice"
    seen = set()
    for match in matches:
        chosen = ng.apply(program, transform, match)
        assert chosen.structure_hash == program.structure_hash
        assert chosen.schedule != program.schedule
        seen.add(chosen.canonical_hash)
    assert len(seen) == len(matches), "two matches give the same schedule"


def test_loop_order_offers_every_permutation_of_the_loop_axes() -> None:
    program = saturated("matmul", 256, 256, 1024)
    orders = {
        ng.apply(program, "loop_order", m).schedule.order
        for m in ng.get_transform("loop_order").analyze(program)
    }
    assert len(orders) == 6 and ("N", "K", "M") in orders


def test_buffer_count_choices_fit_on_chip_and_run() -> None:
    program = saturated("matmul", 256, 512, 1024).with_schedule("order=N,K,M blocks=N:512")
    for match in ng.get_transform("buffer_count").analyze(program):
        ng.kernel_plan(ng.apply(program, "buffer_count", match))  # raises ScheduleError if it did not fit


def test_saturate_refuses_choices_naming_them() -> None:
    program = saturated("matmul", 256, 256, 512)
    with pytest.raises(ng.NkigymError, match="loop_order"):
        ng.saturate(program, ["loop_order"])


def _bf16_matmul(m: int, k: int, n: int) -> tuple[ng.Program, dict[str, np.ndarray]]:
    c = case("matmul", m, k, n)
    rng = np.random.default_rng(11)
    arrays = {name: rng.standard_normal(shape).astype(BF16) for name, shape in c.shapes.items()}
    return ng.tile(c.func, dict(c.shapes), dtype=BF16), arrays


def test_schedule_search_finds_a_faster_kernel_that_replays_and_runs_equal() -> None:
    program, arrays = _bf16_matmul(512, 512, 1024)
    result = ng.search(program, strategy="schedule", seed=0)
    unscheduled = ng.estimate(ng.saturate(program))
    assert result.best.schedule is not None
    assert result.cost.seconds < unscheduled.seconds
    assert ng.replay(program, result.path).canonical_hash == result.best.canonical_hash
    assert result.profile is not None
    assert abs(result.profile.mfu - result.cost.mfu) * 100 <= 5.0
    out = simulate(ng.emit(result.best, backend="nki"), *(arrays[p.name] for p in program.params))
    want = reference("matmul", arrays)
    assert np.abs(np.asarray(out, np.float64) - want).max() / np.abs(want).max() < 2e-2


def test_schedule_search_handles_an_epilogue() -> None:
    c = case("bias_relu", 256, 512, 512)
    program = ng.tile(c.func, dict(c.shapes), dtype=np.float32)
    result = ng.search(program, strategy="schedule", seed=0, rounds=1, width=1)
    arrays = inputs("bias_relu", 256, 512, 512)
    out = simulate(ng.emit(result.best, backend="nki"), *(arrays[p.name] for p in program.params))
    np.testing.assert_allclose(out, reference("bias_relu", arrays), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("schedule", [None, "order=N,K,M blocks=K:256 buffers=psum:4"])
def test_two_level_accumulation_equals_numpy(schedule: str | None) -> None:
    program = saturated("matmul", 256, 1024, 512)
    rfactor = ng.get_transform("rfactor")
    matches = rfactor.analyze(program)
    assert matches
    split = ng.apply(program, rfactor, matches[0])
    assert any(s.op.name == "tensor_tensor" for s in split.statements), "no SBUF accumulation"
    if schedule is not None:
        split = split.with_schedule(schedule)
    arrays = inputs("matmul", 256, 1024, 512, seed=5)
    want = reference("matmul", arrays)
    np.testing.assert_allclose(ng.interpret(split, **arrays), want, rtol=1e-4, atol=1e-3)
    out = simulate(ng.emit(split, backend="nki"), *(arrays[p.name] for p in split.params))
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)
