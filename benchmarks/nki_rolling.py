"""Loop rolling of scheduled kernels: kernel lines and emit time per schedule.

For each matmul size and dtype, a fresh Python process tiles and saturates
``nc_matmul(a, b)`` once, then for each schedule emits the NKI kernel (lowering from
the kernel plan, rolling, rendering) ``--repeat`` times (the table shows the median
emit time), and runs the rolled kernel in the project's NKI simulator on random inputs
against numpy (float64). Columns: lines of the straight-line and of the rolled kernel,
``for`` loops, slot indices printed modulo their pool's count (``psum[(i0 + 2) % 8]``),
and the simulated result's max relative error.

    .venv/bin/python benchmarks/nki_rolling.py [--sizes 1024 2048 4096] [--repeat 3]
    .venv/bin/python benchmarks/nki_rolling.py --no-write --no-simulate   # print only
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from machine import write_results

SCHEDULES = [
    "order=N,K,M blocks=K:256,M:256",
    "order=N,M,K blocks=M:512 inner=K,M buffers=psum:8",
    "order=N,K,M blocks=N:512 buffers=psum:2",
    "order=N,K,M blocks=N:512,K:1024,M:512 inner=K,M",
]
DTYPES = {1024: "float32", 2048: "bfloat16", 4096: "bfloat16"}
MODULO = re.compile(r"\[\([^\]]*\) % \d+\]")


def measure(size: int, dtype: str, repeat: int, simulate_kernels: bool) -> list[dict[str, Any]]:
    """Every schedule at one size, in this process."""
    import numpy as np

    import nkigym_graph as ng
    from nkigym_graph.nki_sim import simulate
    from nkigym_graph.nki_sim.dtypes import to_dtype

    def matmul(a: object, b: object) -> object:
        return ng.nc_matmul(a, b)

    start = time.perf_counter()
    program = ng.saturate(ng.tile(matmul, {"a": (size, size), "b": (size, size)}, dtype=dtype))
    prepare_s = time.perf_counter() - start
    rng = np.random.default_rng(0)
    np_dtype = to_dtype(dtype)
    a = rng.standard_normal((size, size)).astype(np_dtype)
    b = rng.standard_normal((size, size)).astype(np_dtype)
    expected = a.astype(np.float64).T @ b.astype(np.float64)
    rows = []
    for schedule in SCHEDULES:
        scheduled = program.with_schedule(schedule)
        times = []
        for _ in range(repeat):
            begin = time.perf_counter()
            artifact = ng.emit_artifact(scheduled, backend="nki")
            times.append(time.perf_counter() - begin)
        error = None
        if simulate_kernels:
            out = simulate(artifact.text, a, b)
            error = float(np.abs(out.astype(np.float64) - expected).max() / np.abs(expected).max())
        rows.append(
            {
                "size": size,
                "dtype": dtype,
                "schedule": schedule,
                "prepare_s": prepare_s,
                "emit_s": statistics.median(times),
                "lines": artifact.facts["lines"],
                "lines_unrolled": artifact.facts["lines_unrolled"],
                "loops": artifact.facts["loops"],
                "modulo": len(MODULO.findall(artifact.text)),
                "rel_error": error,
            }
        )
    return rows


def run_fresh(size: int, repeat: int, simulate_kernels: bool) -> list[dict[str, Any]]:
    """``measure`` in a new interpreter."""
    args = [sys.executable, __file__, "--one", str(size), "--repeat", str(repeat)]
    if not simulate_kernels:
        args.append("--no-simulate")
    done = subprocess.run(args, check=True, capture_output=True, text=True)
    rows: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return rows


def table(rows: list[dict[str, Any]], repeat: int) -> str:
    """The markdown table."""
    lines = [
        '`tile` -> `saturate` -> `with_schedule(s)` -> `emit(backend="nki")` (median of '
        f"{repeat} emits) -> `nki_sim.simulate` vs numpy in float64; trn2, a fresh process per size.",
        "",
        "| N, dtype | schedule | kernel lines (unrolled -> rolled) | loops | modulo slot indices "
        "| emit (s) | max rel. error |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        error = "-" if r["rel_error"] is None else f"{r['rel_error']:.1e}"
        lines.append(
            f"| {r['size']} {r['dtype']} | `{r['schedule']}` | {r['lines_unrolled']} -> {r['lines']} "
            f"| {r['loops']} | {r['modulo']} | {r['emit_s']:.2f} | {error} |"
        )
    return "\n".join(lines)


NOTES = """Each stream of rotating buffers is one list (`psum = [nl.ndarray(...) for _ in range(8)]`)
and consecutive tiles take consecutive slots, so a slot index is affine in the loop indices
only modulo the list's length. The roller fits slot indices modulo the count and prints
`psum[(2 * i0 + i1) % 8]` where an index wraps within its loops; before, wrapping indices
split loops or kept code straight-line."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--no-simulate", action="store_true", help="skip the simulator check")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    simulate_kernels = not args.no_simulate
    if args.one is not None:
        print(json.dumps(measure(args.one, DTYPES.get(args.one, "bfloat16"), args.repeat, simulate_kernels)))
        return
    rows = [row for size in args.sizes for row in run_fresh(size, args.repeat, simulate_kernels)]
    report = table(rows, args.repeat)
    if args.no_write:
        print(report)
    else:
        write_results("nki_rolling", "Loop rolling of scheduled kernels", report, NOTES)


if __name__ == "__main__":
    main()
