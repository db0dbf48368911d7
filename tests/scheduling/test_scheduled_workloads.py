"""The workloads beyond matmul under schedules: every loop order of each saturated
workload (reductions across tiles, broadcasts, row spreads, transposes of bf16 tiles,
online softmax) emits a planned NKI kernel that fits on chip and simulates equal to
numpy, and the ``schedule`` search strategy runs on each workload to a kernel that does."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from support import example_workloads

import nkigym_graph as ng
from nkigym_graph.scheduling.loops import loop_axes

WORKLOADS = example_workloads().WORKLOADS

SHAPES = {
    "softmax": {"x": (200, 1300)},
    "layernorm": {"x": (130, 700), "gamma": (1, 700), "beta": (1, 700)},
    "rmsnorm_matmul": {"x": (200, 700), "w": (700, 600)},
    "attention": {"q_t": (64, 200), "k_t": (64, 1100), "v": (1100, 64)},
}
"""Shapes spanning several tiles (a row longer than one matmul result, ragged edges)."""
CASES = [(name, online) for name in SHAPES for online in ((False, True) if name == "attention" else (False,))]


def _run(program: ng.Program, name: str, shapes: dict[str, tuple[int, int]]) -> float:
    """Relative error of ``program``'s NKI kernel against the numpy reference."""
    workload = WORKLOADS[name]
    storage = np.float32 if workload.dtype == "float32" else ml_dtypes.bfloat16
    arrays = {k: v.astype(storage) for k, v in workload.inputs(shapes, seed=5).items()}
    out = ng.nki_sim.simulate(ng.emit(program, backend="nki"), *arrays.values())
    want = workload.reference(*(a.astype(np.float64) for a in arrays.values()))
    return float(np.abs(np.asarray(out, np.float64) - want).max() / np.abs(want).max())


def _tolerance(name: str) -> float:
    return 2e-5 if WORKLOADS[name].dtype == "float32" else 2e-2


@pytest.mark.parametrize("name,online", CASES)
def test_every_loop_order_emits_a_kernel_equal_to_numpy(name: str, online: bool) -> None:
    shapes = SHAPES[name]
    workload = WORKLOADS[name]
    program = ng.saturate(ng.tile(workload.func, shapes, dtype=workload.dtype, online=online))
    orders = list(itertools.permutations(loop_axes(program)))
    assert orders
    for order in orders:
        scheduled = program.with_schedule(f"order={','.join(order)}")
        assert ng.estimate(scheduled).feasible, order
        assert _run(scheduled, name, shapes) < _tolerance(name), order


def test_a_bf16_transpose_keeps_psum_room_for_its_scratch() -> None:
    """rmsnorm(x) @ w transposes bf16 tiles of x: the default plan leaves PSUM room for
    the transpose's bf16 scratch, so the kernel fits where the fp32 slots alone fill PSUM."""
    workload = WORKLOADS["rmsnorm_matmul"]
    program = ng.saturate(ng.tile(workload.func, SHAPES["rmsnorm_matmul"], dtype="bfloat16"))
    plan = ng.kernel_plan(program.with_schedule("order=K,M,N"))
    psum = sum(s.buffers * s.bytes_per_partition for s in plan.streams.values() if s.buffer == "psum")
    assert psum + 128 * 2 <= program.target.psum_bytes_per_partition


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_schedule_search_reaches_a_kernel_equal_to_numpy(name: str) -> None:
    workload = WORKLOADS[name]
    program = ng.tile(workload.func, workload.small, dtype=workload.dtype)
    result = ng.search(program, strategy="schedule", budget=60, seed=0, confirm=False)
    assert ng.replay(program, result.path).canonical_hash == result.best.canonical_hash
    assert _run(result.best, name, workload.small) < _tolerance(name)


@pytest.mark.parametrize("buffers", ["psum:8", "psum:4"])
def test_fp32_transposes_write_their_psum_slots_and_the_plan_fits(buffers: str) -> None:
    """An fp32 transpose written once writes its fp32 PSUM slot directly; it used to go
    through a scratch tile the plan did not count, and with every PSUM bank planned the
    kernel overflowed PSUM in the simulator (the schedule search stopped with that error)."""

    def transposed_matmul(x, w):  # type: ignore[no-untyped-def]
        return ng.nc_matmul(ng.nc_transpose(x), w)

    program = ng.saturate(ng.tile(transposed_matmul, {"x": (256, 300), "w": (300, 600)}))
    rng = np.random.default_rng(4)
    x, w = (
        rng.standard_normal((256, 300)).astype(np.float32),
        rng.standard_normal((300, 600)).astype(np.float32),
    )
    kernel = ng.emit(program.with_schedule(f"buffers={buffers}"), backend="nki")
    assert "transpose_psum" not in kernel
    out = ng.nki_sim.simulate(kernel, x, w)
    np.testing.assert_allclose(out, x.astype(np.float64) @ w, rtol=1e-4, atol=1e-3)
    best = ng.search(program, strategy="schedule", seed=0, progress=False, budget=6).best
    out = ng.nki_sim.simulate(ng.emit(best, backend="nki"), x, w)
    np.testing.assert_allclose(out, x.astype(np.float64) @ w, rtol=1e-4, atol=1e-3)


def test_a_scheduled_kernel_is_emitted_in_the_dtype_it_was_planned_for() -> None:
    """``emit(dtype=...)`` of a scheduled program kept the plan's bf16 tiles under an fp32
    output (errors of bf16 size, silently): it is refused, naming what to do, unless it is
    the planned dtype (a float64 program's plan holds fp32 tiles)."""

    def matmul(a, b):  # type: ignore[no-untyped-def]
        return ng.nc_matmul(a, b)

    shapes = {"a": (256, 128), "b": (256, 512)}
    bf16 = ng.saturate(ng.tile(matmul, shapes, dtype="bfloat16")).with_schedule("order=N,M,K")
    with pytest.raises(
        ng.NkigymError, match="planned for bfloat16 tiles; tile the function with dtype='float32'"
    ):
        ng.emit(bf16, backend="nki", dtype="float32")
    float64 = ng.saturate(ng.tile(matmul, shapes, dtype="float64")).with_schedule("order=N,M,K")
    rng = np.random.default_rng(6)
    a, b = (
        rng.standard_normal(shapes["a"]).astype(np.float32),
        rng.standard_normal(shapes["b"]).astype(np.float32),
    )
    out = ng.nki_sim.simulate(ng.emit(float64, backend="nki", dtype="float32"), a, b)
    np.testing.assert_allclose(out, a.T.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("tail", ["transpose", "reduce_then_transpose"])
def test_a_schedule_of_a_program_ending_in_a_transpose_runs(tail: str) -> None:
    """The kernel program's PSUM eviction after a transpose gives each axis both
    elementwise roles, so it names them after the output (``output.0``) where the program
    says ``P`` and ``F``: ``order=P`` was a KeyError in the planner, and the schedule
    search stopped on it. The schedule's axes are now named as the kernel program names them."""

    def transposed(x):  # type: ignore[no-untyped-def]
        if tail == "transpose":
            return ng.nc_transpose(x)
        return ng.nc_transpose(ng.tensor_tensor(x, ng.tensor_reduce(x, op="max"), op="subtract"))

    program = ng.tile(transposed, {"x": (256, 128)})
    x = np.random.default_rng(8).standard_normal((256, 128)).astype(np.float32)
    want = x.T if tail == "transpose" else (x - x.max(axis=1, keepdims=True)).T
    for match in ng.analyze(program, "loop_order"):
        scheduled = ng.apply(program, "loop_order", match)
        assert ng.kernel_plan(scheduled).steps
        out = ng.nki_sim.simulate(ng.emit(scheduled, backend="nki"), x)
        np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    result = ng.search(program, strategy="schedule", budget=8, progress=False)
    out = ng.nki_sim.simulate(ng.emit(result.best, backend="nki"), x)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
