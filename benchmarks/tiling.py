"""Tiling benchmark: square matmuls tiled, built and verified.

For each size N, a fresh Python process tiles ``nc_matmul(a, b)`` with a, b of shape
(N, N) on Trn2 (128-wide tiles), builds the verified Program, and reports the
statement count, the time of each part and its peak resident memory
(``ru_maxrss``). Each size runs ``--repeat`` times; the table shows the fastest run
(the machine is shared, so slower runs measure the neighbours) and the largest peak.
The markdown table is printed and written to ``benchmarks/results/tiling.md``.

    .venv/bin/python benchmarks/tiling.py [--sizes 1024 2048 4096] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from machine import machine_notes

RESULTS = Path(__file__).parent / "results" / "tiling.md"


def measure(size: int) -> dict[str, float]:
    """One run in this process: tile, then build and verify the Program."""
    from nkigym_graph.tiling import nc_matmul, tile_parts

    def tiled_matmul(a: object, b: object) -> object:
        return nc_matmul(a, b)

    start = time.perf_counter()
    parts = tile_parts(tiled_matmul, {"a": (size, size), "b": (size, size)})
    tiled = time.perf_counter()
    program = parts.build()
    built = time.perf_counter()
    return {
        "size": size,
        "statements": len(program),
        "tile_s": tiled - start,
        "build_s": built - tiled,
        "total_s": built - start,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_fresh(size: int) -> dict[str, float]:
    """``measure(size)`` in a new interpreter, so peak memory is this size's alone."""
    out = subprocess.run(
        [sys.executable, __file__, "--one", str(size)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def table(rows: list[dict[str, float]], repeat: int) -> str:
    """The markdown report."""
    lines = [
        "# Tiling benchmark: square matmul on trn2",
        "",
        "`tile(nc_matmul, a (N, N), b (N, N))`: trace, dimension analysis and emission "
        "(*tile*), then `Program` construction with verification (*build*). Peak memory "
        f"is the process's max RSS (a fresh process per size). Fastest of {repeat} run(s); "
        "the median total shows the noise of the shared machine.",
        "",
        "| N | tiles (M x N x K) | statements | tile (s) | build + verify (s) | total (s) "
        "| median total (s) | peak RSS (MiB) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        t = -(-int(row["size"]) // 128)
        lines.append(
            f"| {int(row['size'])} | {t} x {t} x {t} | {int(row['statements'])} | "
            f"{row['tile_s']:.3f} | {row['build_s']:.3f} | {row['total_s']:.3f} | "
            f"{row['median_total_s']:.3f} | {row['peak_mib']:.0f} |"
        )
    lines += ["", machine_notes(), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(measure(args.one)))
        return
    rows = []
    for size in args.sizes:
        runs = [run_fresh(size) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["total_s"])
        best["peak_mib"] = max(r["peak_mib"] for r in runs)
        best["median_total_s"] = statistics.median(r["total_s"] for r in runs)
        rows.append(best)
    report = table(rows, args.repeat)
    print(report)
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(report)


if __name__ == "__main__":
    main()
