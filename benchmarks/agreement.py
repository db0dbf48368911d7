"""One yardstick: the trn2 cost model vs the profile of the kernel the backend emits.

For matmul N^3 (N = 256 .. 2048), fp32 and bf16, tiled and saturated, and the best
program a greedy search finds (N <= 1024): the cost model's MFU for the program
(``estimate``, what search ranks with) and the profiled MFU of ``emit(program,
backend="nki")`` run in the simulator (``nki_sim.profile``). The target
is agreement within 5 percentage points on every row. Then scheduled programs (softmax,
layer norm, RMS norm, RMS norm + matmul and a matmul under a schedule, whose kernels
the backend emits from their plans, engine choices included): modeled and profiled time,
which agree exactly. Results go to ``benchmarks/results/agreement.md``.

    .venv/bin/python benchmarks/agreement.py [--sizes 256 512 1024 2048]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from machine import write_results

import nkigym_graph as ng
from nkigym_graph.nki_sim import profile

sys.path.insert(0, str(Path(__file__).parents[1] / "examples"))
from workloads import WORKLOADS

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {"fp32": np.dtype(np.float32), "bf16": BF16}
TOLERANCE_PP = 5.0


def matmul(a: object, b: object) -> object:
    return ng.nc_matmul(a, b)


def row(size: int, dtype_name: str, saturated: bool) -> tuple[float, float, str, str]:
    dtype = DTYPES[dtype_name]
    program = ng.tile(matmul, {"a": (size, size), "b": (size, size)}, dtype=dtype)
    if saturated:
        program = ng.saturate(program)
    model = ng.estimate(program)
    kernel = ng.emit(program, backend="nki")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(dtype)
    b = rng.standard_normal((size, size)).astype(dtype)
    prof = profile(kernel, a, b)
    want = a.astype(np.float64).T @ b.astype(np.float64)
    error = float(np.abs(np.asarray(prof.outputs, np.float64) - want).max() / np.abs(want).max())
    assert error < 2e-2, f"emitted kernel differs from numpy ({error:.1e})"
    return model.mfu * 100, prof.mfu * 100, model.bound, prof.critical


def search_row(size: int, dtype_name: str) -> tuple[float, float, str, str]:
    """The greedy search's best: its modeled MFU and the profile search confirms it with."""
    program = ng.tile(matmul, {"a": (size, size), "b": (size, size)}, dtype=DTYPES[dtype_name])
    result = ng.search(program, strategy="greedy", seed=0)
    assert result.profile is not None
    return result.cost.mfu * 100, result.profile.mfu * 100, result.cost.bound, result.profile.critical


SCHEDULED = [
    ("softmax", {"x": (1024, 4096)}, "order=P"),
    ("layernorm", {"x": (1024, 4096), "gamma": (1, 4096), "beta": (1, 4096)}, "order=P"),
    ("rmsnorm", {"x": (1024, 4096), "gamma": (1, 4096)}, "order=P"),
    ("rmsnorm_matmul", {"x": (512, 1024), "w": (1024, 1024)}, "order=M,N,K blocks=K:256 ahead=M"),
]
"""Scheduled workloads (``examples/workloads.py``): name, shapes, schedule of the saturated program."""


def scheduled_row(name: str, shapes: dict[str, tuple[int, int]], schedule: str) -> tuple[float, float]:
    """Modeled and profiled time (us) of a scheduled workload's kernel."""
    workload = WORKLOADS[name]
    program = ng.saturate(ng.tile(workload.func, shapes, dtype=workload.dtype)).with_schedule(schedule)
    storage = np.float32 if workload.dtype == "float32" else BF16
    arrays = [a.astype(storage) for a in workload.inputs(shapes).values()]
    prof = profile(ng.emit(program, backend="nki"), *arrays)
    return ng.estimate(program).seconds * 1e6, prof.total_us


def scheduled_matmul_row() -> tuple[float, float]:
    """Modeled and profiled time (us) of the schedule search's 1024^3 bf16 matmul kernel."""
    program = ng.tile(matmul, {"a": (1024, 1024), "b": (1024, 1024)}, dtype=BF16)
    best = ng.search(program, strategy="schedule", seed=0, confirm=False, progress=False).best
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((1024, 1024)).astype(BF16) for _ in range(2))
    return ng.estimate(best).seconds * 1e6, profile(ng.emit(best, backend="nki"), a, b).total_us


def scheduled_table() -> tuple[str, float]:
    """The scheduled rows and their largest relative difference."""
    lines = [
        "| scheduled program | schedule | modeled | profiled | difference |",
        "|---|---|---|---|---|",
    ]
    worst = 0.0
    cases = [
        (f"{n} {' '.join(f'{k} {v[0]}x{v[1]}' for k, v in sh.items())}", sc, n, sh) for n, sh, sc in SCHEDULED
    ]
    for label, schedule, name, shapes in [*cases, ("matmul 1024^3 bf16", "schedule search's best", "", {})]:
        modeled, profiled = scheduled_matmul_row() if not name else scheduled_row(name, shapes, schedule)
        diff = (modeled - profiled) / profiled * 100
        worst = max(worst, abs(diff))
        lines.append(f"| {label} | `{schedule}` | {modeled:.2f} us | {profiled:.2f} us | {diff:+.2f}% |")
        print(lines[-1], flush=True)
    return "\n".join(lines), worst


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048])
    args = parser.parse_args()
    lines = [
        "| matmul | dtype | program | cost model MFU | profiled MFU | difference "
        "| cost model says | profile says |",
        "|---|---|---|---|---|---|---|---|",
    ]
    worst = 0.0
    for size in args.sizes:
        for dtype_name in DTYPES:
            for saturated in (False, True):
                start = time.perf_counter()
                modeled, profiled, bound, critical = row(size, dtype_name, saturated)
                diff = profiled - modeled
                worst = max(worst, abs(diff))
                kind = "saturated" if saturated else "tiled"
                lines.append(
                    f"| {size}^3 | {dtype_name} | {kind} | {modeled:.1f}% | {profiled:.1f}% | "
                    f"{diff:+.1f} pp | {bound} | {critical} |"
                )
                print(lines[-1], f"({time.perf_counter() - start:.1f} s)", flush=True)
    for size in [s for s in args.sizes if s <= 1024]:
        for dtype_name in DTYPES:
            start = time.perf_counter()
            modeled, profiled, bound, critical = search_row(size, dtype_name)
            diff = profiled - modeled
            worst = max(worst, abs(diff))
            lines.append(
                f"| {size}^3 | {dtype_name} | greedy search's best | {modeled:.1f}% | {profiled:.1f}% | "
                f"{diff:+.1f} pp | {bound} | {critical} |"
            )
            print(lines[-1], f"({time.perf_counter() - start:.1f} s)", flush=True)
    verdict = (
        f"Largest disagreement {worst:.1f} pp "
        f"({'within' if worst <= TOLERANCE_PP else 'NOT within'} the {TOLERANCE_PP:.0f} pp target)."
    )
    scheduled, worst_scheduled = scheduled_table()
    verdict += (
        f"\n\n{scheduled}\n\nScheduled programs: largest difference {worst_scheduled:.2f}% (the cost model "
        "times the kernel the backend emits for the plan, engine choices included)."
    )
    notes = (
        "Cost model: `estimate(program)` (the `trn2` cost-model plugin, what search ranks with). "
        "Profile: `nki_sim.profile` of `emit(program, backend='nki')`, a timing model of the "
        "emitted instruction stream calibrated against hardware (benchmarks/results/calibration.md). "
        "Neither is a measurement."
    )
    write_results(
        "agreement", "Cost model vs profile of the emitted kernel", "\n".join(lines) + "\n\n" + verdict, notes
    )


if __name__ == "__main__":
    main()
