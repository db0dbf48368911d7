"""Scheduled programs emitted as NKI kernels: the kernel declares each stream's rotating
buffers once, runs in the simulator equal to numpy (fp32 and bf16), fits on chip, and the
cost model's time for the schedule is the profile of that kernel."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from scheduling.schedule_cases import case, inputs, reference, saturated

import nkigym_graph as ng
from nkigym_graph.cost.kernel_timing import kernel_profile
from nkigym_graph.nki_sim import profile, simulate

BF16 = np.dtype(ml_dtypes.bfloat16)

SCHEDULES = [
    ("matmul", 256, 384, 1024, "order=N,K,M blocks=N:512 buffers=psum:4"),
    ("matmul", 384, 512, 512, "order=N,M,K blocks=M:256 inner=K,M buffers=psum:8"),
    ("matmul", 256, 512, 512, "order=M,N,K blocks=K:256 buffers=load.a:2,load.b:2"),
    ("matmul", 300, 260, 1000, "order=N,M,K blocks=M:256,K:256,N:1000"),
    ("bias_relu", 256, 384, 512, "order=N,M,K blocks=K:256"),
    ("chain", 256, 256, 384, "order=N,K,a.1,b.1 blocks=K:256"),
]


def _emit_and_run(
    program: ng.Program, arrays: dict[str, np.ndarray]
) -> tuple[str, np.ndarray, ng.SimulationReport]:
    artifact = ng.emit_artifact(program, backend="nki")
    out, report = simulate(artifact.text, *(arrays[p.name] for p in program.params), report=True)
    return artifact.text, out, report


@pytest.mark.parametrize("kind,m,k,n,schedule", SCHEDULES, ids=[s[-1] for s in SCHEDULES])
def test_scheduled_kernel_simulates_equal_to_numpy(kind: str, m: int, k: int, n: int, schedule: str) -> None:
    program = saturated(kind, m, k, n).with_schedule(schedule)
    arrays = inputs(kind, m, k, n, seed=3)
    text, out, report = _emit_and_run(program, arrays)
    want = reference(kind, arrays)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=2e-5 * max(1.0, float(np.abs(want).max())))
    assert report.peak_sbuf_bytes <= report.sbuf_capacity
    assert report.peak_psum_bytes <= report.psum_capacity
    plan = ng.kernel_plan(program)
    for stream in plan.streams.values():
        assert f"for _ in range({stream.buffers})]" in text, f"stream {stream.name} is not declared as a pool"


def test_bf16_scheduled_kernel_within_bf16_tolerance() -> None:
    c = case("matmul", 512, 1024, 1024)
    program = ng.saturate(ng.tile(c.func, dict(c.shapes), dtype=BF16))
    program = program.with_schedule("order=N,K,M blocks=N:512,K:512 buffers=psum:8")
    rng = np.random.default_rng(7)
    arrays = {name: rng.standard_normal(shape).astype(BF16) for name, shape in c.shapes.items()}
    _, out, _ = _emit_and_run(program, arrays)
    want = reference("matmul", arrays)
    error = np.abs(np.asarray(out, np.float64) - want).max() / np.abs(want).max()
    assert error < 2e-2


@pytest.mark.parametrize(
    "schedule",
    [
        "order=N,K,M blocks=N:512 buffers=psum:4",
        "order=N,M,K blocks=M:256 inner=K,M buffers=psum:8",
        "order=M,N,K buffers=load.a:1",
    ],
)
def test_modeled_time_of_a_schedule_is_its_kernels_profile(schedule: str) -> None:
    """What search ranks a schedule by is the profile of the kernel the backend emits."""
    c = case("matmul", 256, 512, 1024)
    program = ng.saturate(ng.tile(c.func, dict(c.shapes), dtype=BF16)).with_schedule(schedule)
    model = ng.estimate(program)
    arrays = {name: np.ones(shape, dtype=BF16) for name, shape in c.shapes.items()}
    profiled = profile(ng.emit(program, backend="nki"), *(arrays[p.name] for p in program.params))
    assert abs(model.mfu - profiled.mfu) * 100 <= 5.0, (model.mfu, profiled.mfu)
    assert model.seconds == pytest.approx(profiled.total_ns * 1e-9, rel=0.05)


def test_overflowing_schedule_is_priced_infeasible_and_not_emitted() -> None:
    program = saturated("matmul", 256, 256, 512).with_schedule("buffers=psum:9")
    assert not ng.estimate(program).feasible
    with pytest.raises(ng.NkigymError, match="PSUM overflows on trn2"):
        ng.emit(program, backend="nki")


def test_a_huge_buffer_count_is_priced_infeasible_without_a_record_per_buffer() -> None:
    """The cost model made an allocation record for every buffer a stream was given, used
    or not: ``buffers=load.a:10000000`` took over a minute to price (and more, memory)."""
    program = saturated("matmul", 256, 256, 512).with_schedule("order=N,M,K buffers=load.a:1000000")
    report = ng.estimate(program)
    assert not report.feasible and "SBUF overflows" in report.reason
    plan = ng.kernel_plan(program, overflowing=True)
    used = {slot for step in plan.steps for _, slot in step.slots}
    hbm = sum(info.external for info in plan.program.variables.values())
    assert len(kernel_profile(plan).records) == len(used) + hbm


def test_a_better_schedule_is_modeled_faster_than_program_order() -> None:
    """Double-buffered PSUM and streamed loads let DMA overlap the Tensor Engine."""
    c = case("matmul", 512, 1024, 1024)
    program = ng.saturate(ng.tile(c.func, dict(c.shapes), dtype=BF16))
    blocked = program.with_schedule("order=N,M,K blocks=N:512,M:128 buffers=psum:4")
    assert ng.estimate(blocked).seconds < ng.estimate(program).seconds


def _transposed_matmul(x, w):
    return ng.nc_matmul(ng.nc_transpose(x), w)


@pytest.mark.parametrize(
    "schedule",
    ["order=M,N,K", "order=M,N,K buffers=psum.bfloat16:4,psum:4", "order=N,M,K blocks=M:256"],
)
def test_bf16_transposes_write_their_own_psum_slots(schedule: str) -> None:
    """A transpose of a bf16 tile lives in a bf16 PSUM stream (no scratch tile and copy):
    the kernel equals numpy, fits PSUM's banks, and its profile is the modeled time."""
    shapes = {"x": (384, 512), "w": (512, 1024)}
    program = ng.saturate(ng.tile(_transposed_matmul, shapes, dtype=BF16)).with_schedule(schedule)
    plan = ng.kernel_plan(program)
    assert plan.streams["psum.bfloat16"].dtype == "bfloat16"
    assert plan.streams["psum"].dtype == "float32"
    rng = np.random.default_rng(5)
    arrays = {name: rng.standard_normal(shape).astype(BF16) for name, shape in shapes.items()}
    text = ng.emit(program, backend="nki")
    assert "transpose_psum" not in text and "nisa.tensor_copy" not in text
    profiled = profile(text, *arrays.values())
    want = arrays["x"].astype(np.float64) @ arrays["w"].astype(np.float64)
    error = np.abs(np.asarray(profiled.outputs, np.float64) - want).max() / np.abs(want).max()
    assert error < 2e-2
    model = ng.estimate(program)
    assert model.seconds == pytest.approx(profiled.total_ns * 1e-9, rel=1e-6)


def test_psum_slots_are_counted_in_whole_banks() -> None:
    """Seven bf16 transpose slots of 256 bytes and two fp32 ones take nine of PSUM's eight
    2 KiB banks."""
    shapes = {"x": (384, 512), "w": (512, 1024)}
    program = ng.saturate(ng.tile(_transposed_matmul, shapes, dtype=BF16))
    with pytest.raises(ng.ScheduleError, match="PSUM overflows"):
        ng.kernel_plan(program.with_schedule("order=M,N,K buffers=psum.bfloat16:7,psum:2"))
    assert ng.kernel_plan(program.with_schedule("order=M,N,K buffers=psum.bfloat16:6,psum:2"))
