"""NKI emission time against program size: emit CPU per statement of growing programs.

For each case, a fresh Python process builds a bf16 matmul program on trn2 (*build*):
``tiled`` is ``tiled_matmul(M, K, N)`` (a load of each operand tile and a matmul per K
step of each output tile), ``reuse`` the same saturated with ``data_reuse`` and
``dead_code`` (loads shared between output tiles), ``partial`` the same with only the
first ``PARTIAL_MATCHES`` ``data_reuse`` matches applied one at a time (a few loads
shared, the rest as tiled); ``--program FILE`` adds a pickled program (e.g. a search's
best). The process emits the NKI kernel once (the first emit also fills the program's
caches: statement texts, graph, hash), then ``--emit-runs`` times, each after a
``gc.collect()``, and reports the fastest and the median CPU time
(``time.process_time``) and the fastest per statement: a flat last column is emit time
linear in program size. The markdown table is printed and written to
``benchmarks/results/nki_emit_scaling.md``.

    .venv/bin/python benchmarks/nki_emit_scaling.py [--cases tiled:2048x2048x2048 ...] [--emit-runs 3]
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from machine import in_subprocess, peak_rss_mib, write_results
from nki_emit import emit_cpu

CASES = [
    "tiled:1024x1024x1024",
    "tiled:2048x1024x2048",
    "tiled:2048x2048x2048",
    "tiled:2048x4096x2048",
    "tiled:4096x4096x2048",
    "reuse:2048x2048x2048",
    "reuse:2048x4096x2048",
    "reuse:4096x4096x2048",
    "partial:2048x2048x2048",
    "partial:2048x4096x2048",
]
PARTIAL_MATCHES = 40


def build(case: str) -> Any:
    """The program of ``case`` (``kind:MxKxN``, or ``file:PATH`` of a pickled program)."""
    import nkigym_graph as ng
    from nkigym_graph.cost import cost_models
    from nkigym_graph.ir.synthetic import tiled_matmul

    kind, _, spec = case.partition(":")
    if kind == "file":
        if "trn2" not in cost_models():  # a pickled program's target names its cost model
            import nkigym_graph_plugins.trn2_cost as trn2_cost

            ng.register_plugin(trn2_cost, name="trn2_cost")
        with open(spec, "rb") as handle:
            return pickle.load(handle)
    m, k, n = (int(x) for x in spec.split("x"))
    program = tiled_matmul(m, k, n, dtype="bfloat16")
    if kind == "reuse":
        return ng.saturate(program, ["data_reuse", "dead_code"])
    if kind == "partial":
        for _ in range(PARTIAL_MATCHES):
            matches = ng.matches_of(program, "data_reuse")
            if not matches:
                break
            program = ng.apply(program, "data_reuse", matches[0])
        return program
    if kind != "tiled":
        raise SystemExit(f"unknown case kind {kind!r} (tiled, reuse, partial, file)")
    return program


def measure(case: str, emit_runs: int) -> dict[str, Any]:
    """One case in this process: build, emit once, then ``emit_runs`` timed emits."""
    import nkigym_graph as ng

    start = time.perf_counter()
    program = build(case)
    built = time.perf_counter()
    artifact = ng.emit_artifact(program, backend="nki")
    first = time.perf_counter()
    cpu = emit_cpu(program, artifact.text, emit_runs)
    return {
        "case": case,
        "statements": len(program),
        "build_s": built - start,
        "first_emit_s": first - built,
        "lines": artifact.facts["lines"],
        "lines_unrolled": artifact.facts["lines_unrolled"],
        "loops": artifact.facts["loops"],
        "emit_cpu_min": min(cpu),
        "emit_cpu_median": statistics.median(cpu),
        "peak_mib": peak_rss_mib(),
    }


def run_fresh(case: str, emit_runs: int) -> dict[str, Any]:
    """``measure(case, emit_runs)`` in a new interpreter."""
    output = in_subprocess(Path(__file__), "--one", case, "--emit-runs", str(emit_runs))
    result: dict[str, Any] = json.loads(output.splitlines()[-1])
    return result


def table(rows: list[dict[str, Any]], emit_runs: int) -> str:
    """The markdown table."""
    lines = [
        f'bf16 matmul programs on trn2, `emit(backend="nki")`; a fresh process per case; build and '
        f"first emit: wall time; emit CPU: fastest and median of {emit_runs} emits after the first.",
        "",
        "| case | statements | build (s) | first emit (s) | emit CPU min / median (s) "
        "| emit CPU per statement (us) | kernel lines (unrolled -> rolled) | loops | peak RSS (MiB) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        per = r["emit_cpu_min"] / r["statements"] * 1e6
        kind, _, spec = r["case"].partition(":")
        label = f"{kind}:{Path(spec).name}" if kind == "file" else r["case"]
        lines.append(
            f"| {label} | {r['statements']} | {r['build_s']:.1f} | {r['first_emit_s']:.2f} | "
            f"{r['emit_cpu_min']:.2f} / {r['emit_cpu_median']:.2f} | {per:.0f} | "
            f"{r['lines_unrolled']} -> {r['lines']} | {r['loops']} | {r['peak_mib']:.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=CASES, help="kind:MxKxN (tiled, reuse, partial)")
    parser.add_argument("--program", action="append", default=[], help="a pickled program to add")
    parser.add_argument("--emit-runs", type=int, default=3, help="timed emits per case")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(measure(args.one, args.emit_runs)))
        return
    cases = [*args.cases, *(f"file:{path}" for path in args.program)]
    rows = [run_fresh(case, args.emit_runs) for case in cases]
    report = table(rows, args.emit_runs)
    if args.no_write:
        print(report)
    else:
        write_results("nki_emit_scaling", "NKI emission time against program size", report)


if __name__ == "__main__":
    main()
