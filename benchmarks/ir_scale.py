"""Build + verify + hash of tiled-matmul-shaped programs of growing size.

Each case runs in a fresh interpreter so its peak memory is its own. Statements come
from ``nkigym_graph.ir.synthetic`` (what tiling a matmul at 128x128x128 produces).

    ./run bench ir_scale
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from machine import in_subprocess, peak_rss_mib, write_results

SIZES = [(1024, 1024, 1024), (2048, 2048, 2048), (2048, 2048, 5120), (4096, 4096, 4096)]


def one_case(m: int, k: int, n: int) -> str:
    from nkigym_graph.ir.program import Program
    from nkigym_graph.ir.synthetic import tiled_matmul_statements

    params, stmts = tiled_matmul_statements(m, k, n)
    base = peak_rss_mib()
    start = time.perf_counter()
    program = Program("mm", params, stmts, "output")
    built = time.perf_counter()
    _ = program.canonical_hash
    hashed = time.perf_counter()
    return f"{len(stmts)} {built - start:.3f} {hashed - built:.3f} {peak_rss_mib():.0f} {base:.0f}"


def main() -> None:
    rows = []
    for m, k, n in SIZES:
        stmts, build, hash_s, peak, base = in_subprocess(Path(__file__), str(m), str(k), str(n)).split()
        rows.append((f"{m}x{k}x{n}", int(stmts), float(build), float(hash_s), float(peak), float(base)))
    lines = [
        "| matmul | statements | build + verify (s) | canonical hash (s) "
        "| µs / statement (build) | peak RSS (MiB) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, stmts, build, hash_s, peak, _base in rows:
        lines.append(
            f"| {name} | {stmts:,} | {build:.2f} | {hash_s:.2f} | {1e6 * build / stmts:.1f} | {peak:.0f} |"
        )
    small, large = rows[1], rows[-1]
    growth = (
        f"From {small[1]:,} to {large[1]:,} statements ({large[1] / small[1]:.1f}x) build + verify "
        f"grew {large[2] / small[2]:.1f}x and hashing {large[3] / small[3]:.1f}x: linear. "
        "Peak RSS is the whole process (Python, numpy, networkx included: about "
        f"{rows[0][5]:.0f} MiB before building)."
    )
    write_results("ir_scale", "IR scale: build, verify and hash", "\n".join(lines), growth)


if __name__ == "__main__":
    if len(sys.argv) == 4:
        print(one_case(*(int(a) for a in sys.argv[1:])))
    else:
        main()
