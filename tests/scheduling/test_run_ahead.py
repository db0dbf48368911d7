"""Running a block loop ahead (``ahead=M``): what each block does before its next loop
(loads and on-chip transposes of its rows, their row statistics) runs during the block
before it. The order stays a topological order of the kernel program, the moved
statements land where the schedule says, the kernels simulate equal to numpy (fp32 and
bf16, ragged sizes), their profile is the modeled time, and ``run_ahead`` offers the
choice to search only where it moves something."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nkigym_graph as ng
from nkigym_graph import Schedule, ScheduleError
from nkigym_graph.ir.axes import program_axes
from nkigym_graph.nki_sim import profile, simulate
from nkigym_graph.scheduling.order import UNPLACED, placements, run_ahead_axes, schedule_order
from nkigym_graph.scheduling.plan import prepared
from nkigym_graph_plugins.scheduling import RunAhead

BF16 = "bfloat16"
EPS = 1e-5


def rmsnorm_matmul(x, w):
    scale = ng.activation(ng.tensor_reduce(ng.activation(x, op="square"), op="mean"), op="rsqrt", bias=EPS)
    return ng.tensor_scalar(ng.nc_matmul(ng.nc_transpose(x), w), scale)


def reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return (x / np.sqrt((x**2).mean(axis=1, keepdims=True) + EPS)) @ w


def _program(m: int, k: int, n: int, dtype: str, schedule: str) -> ng.Program:
    tiled = ng.tile(rmsnorm_matmul, {"x": (m, k), "w": (k, n)}, dtype=dtype)
    return ng.saturate(tiled).with_schedule(schedule)


def _error(program: ng.Program, seed: int = 0) -> float:
    """Relative error of ``program``'s kernel against numpy on the inputs as the kernel holds them."""
    rng = np.random.default_rng(seed)
    storage = ml_dtypes.bfloat16 if program.output_dtype == BF16 else np.float32
    shapes = {p.name: p.shape for p in program.params}
    arrays = {name: rng.standard_normal(shape).astype(storage) for name, shape in shapes.items()}
    out = simulate(ng.emit(program, backend="nki"), *arrays.values())
    want = reference(*(a.astype(np.float64) for a in arrays.values()))
    return float(np.abs(np.asarray(out, np.float64) - want).max() / np.abs(want).max())


def test_ahead_is_part_of_the_schedule_text() -> None:
    schedule = Schedule.parse("order=M,N,K ahead=M")
    assert schedule.ahead == ("M",) and str(schedule) == "order=M,N,K ahead=M"
    assert schedule.replace(ahead=()) == Schedule.parse("order=M,N,K")
    program = _program(256, 256, 512, "float32", "order=M,N,K ahead=M")
    assert str(program).splitlines()[0] == '@nkigym.schedule("order=M,N,K ahead=M")'
    assert program.canonical_hash != program.with_schedule("order=M,N,K").canonical_hash


@pytest.mark.parametrize(
    "schedule,message",
    [
        ("order=M,N,K ahead=K", r"ahead=K: .* 'K' must be a loop of order=M,N,K other than the innermost"),
        ("order=M,N ahead=K", r"ahead=K: .* 'K' must be a loop of order=M,N other than the innermost"),
        # without an order nothing runs ahead: refused, not silently ignored
        ("ahead=M", r"ahead=M: .* 'M' must be a loop of order=\(none\) other than the innermost"),
    ],
)
def test_a_loop_that_cannot_run_ahead_is_refused_naming_it(schedule: str, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        ng.kernel_plan(_program(256, 256, 512, "float32", schedule))


def _moved(program: ng.Program) -> tuple[list[int], list[int]]:
    """The kernel program's statements hoisted out of the N loop in M blocks after the
    first, split into Tensor Engine feeders (transposes of x, their evictions, x's loads)
    and the rest (x's sum of squares and its scale)."""
    kernel = prepared(program, program.schedule or Schedule()).program
    placed = placements(kernel)
    hoisted = [
        node for node in range(len(kernel)) if placed["N"][node] == UNPLACED and placed["M"][node] >= 128
    ]
    transposes = {n for n in hoisted if kernel[n].op.name == "nc_transpose"}
    feeders = {n for n in hoisted if n in transposes or any(p in transposes for p in kernel.pred_of(n))}
    feeders |= {p for n in transposes for p in kernel.pred_of(n)}
    return sorted(feeders), [n for n in hoisted if n not in feeders]


def test_the_next_blocks_feeders_interleave_with_the_first_n_block_and_the_rest_run_last() -> None:
    """x [384, 512] @ w [512, 1024], order=M,N,K: the transposes of M block b + 1 run
    between the matmuls of (b, N block 0); its sum of squares in (b, N block 1), the last."""
    program = _program(384, 512, 1024, "float32", "order=M,N,K ahead=M")
    kernel = prepared(program, program.schedule).program
    order = schedule_order(kernel, program.schedule)
    at = {node: i for i, node in enumerate(order)}
    box = program_axes(kernel).box
    matmuls = [n for n in range(len(kernel)) if kernel[n].op.name == "nc_matmul"]

    def matmuls_of(m: int, n: int) -> list[int]:
        return sorted(at[x] for x in matmuls if box(x)["M"][0] == 128 * m and box(x)["N"][0] == 512 * n)

    feeders, rest = _moved(program)
    transposes = [node for node in feeders if kernel[node].op.name == "nc_transpose"]
    assert len(transposes) == 2 * 4 and rest
    for node in transposes:  # transpose k of x_{b+1} right after matmul k of (b, 0)
        m, k = box(node)["M"][0] // 128, box(node)["K"][0] // 128
        first = [*matmuls_of(m - 1, 0), matmuls_of(m - 1, 1)[0]]
        assert first[k] < at[node] < first[k + 1], (node, m, k)
    for node in rest:
        m = box(node)["M"][0] // 128
        assert matmuls_of(m - 1, 1)[0] < at[node] < matmuls_of(m, 0)[0], (node, m)


def test_order_without_ahead_keeps_the_next_blocks_statements_in_their_block() -> None:
    program = _program(384, 512, 1024, "float32", "order=M,N,K")
    kernel = prepared(program, program.schedule).program
    at = {node: i for i, node in enumerate(schedule_order(kernel, program.schedule))}
    box = program_axes(kernel).box
    feeders, rest = _moved(program)
    last_of_block = {
        m: max(
            at[n]
            for n in range(len(kernel))
            if kernel[n].op.name == "nc_matmul" and box(n)["M"][0] == 128 * m
        )
        for m in range(3)
    }
    for node in feeders + rest:
        m = box(node)["M"][0] // 128 if "M" in box(node) else None
        if m:
            assert at[node] > last_of_block[m - 1]


@pytest.mark.parametrize(
    "m,k,n,dtype",
    [(384, 512, 1024, "float32"), (200, 700, 600, "float32"), (384, 512, 1024, BF16), (200, 300, 260, BF16)],
)
@pytest.mark.parametrize(
    "schedule", ["order=M,N,K ahead=M", "order=M,K,N ahead=M", "order=M,N,K blocks=N:1024,K:256 ahead=M"]
)
def test_kernels_that_run_ahead_equal_numpy(m: int, k: int, n: int, dtype: str, schedule: str) -> None:
    program = _program(m, k, n, dtype, schedule)
    assert ng.estimate(program).feasible
    assert _error(program) < (2e-5 if dtype == "float32" else 2e-2)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([130, 200, 256, 384]),
    st.sampled_from([96, 300, 512]),
    st.sampled_from([64, 260, 600]),
    st.sampled_from(["order=M,N,K", "order=M,K,N", "order=N,M,K", "order=M,N,K blocks=M:256"]),
    st.integers(0, 2**16),
)
def test_running_ahead_keeps_every_statement_in_a_topological_order_and_equals_numpy(
    m: int, k: int, n: int, base: str, seed: int
) -> None:
    program = _program(m, k, n, "float32", base)
    for axis in run_ahead_axes(program, program.schedule):
        ahead = program.with_schedule(f"{base} ahead={axis}")
        plan = ng.kernel_plan(ahead)
        position = {step.node: i for i, step in enumerate(plan.steps) if not step.reload}
        assert sorted(position) == list(range(len(plan.program)))
        assert all(position[p] < position[node] for node in position for p in plan.program.pred_of(node))
        assert _error(ahead, seed) < 2e-5


def test_the_modeled_time_of_a_kernel_that_runs_ahead_is_its_profile() -> None:
    program = _program(
        384, 512, 1024, BF16, "order=M,N,K blocks=N:1024,K:256 buffers=psum.bfloat16:4 ahead=M"
    )
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(p.shape).astype(ml_dtypes.bfloat16) for p in program.params]
    profiled = profile(ng.emit(program, backend="nki"), *arrays)
    assert ng.estimate(program).seconds == pytest.approx(profiled.total_ns * 1e-9, rel=1e-6)


def test_run_ahead_is_offered_only_for_loops_where_it_moves_something() -> None:
    program = _program(384, 512, 1024, "float32", "order=M,N,K")
    details = [m.detail for m in RunAhead().analyze(program)]
    assert details == ["M runs ahead"]
    ahead = program.with_schedule("order=M,N,K ahead=M")
    assert [m.detail for m in RunAhead().analyze(ahead)] == ["no loop runs ahead"]
    # a plain matmul loads each tile where it is first read: nothing is hoisted out of a loop
    matmul = ng.saturate(ng.tile(ng.nc_matmul, {"lhs": (256, 256), "rhs": (256, 1024)}))
    assert run_ahead_axes(matmul, Schedule.parse("order=M,N,K")) == ()
    assert RunAhead().analyze(matmul.with_schedule("order=M,N,K")) == []
