"""The cost of one search state on large programs; results in ``benchmarks/results/search_state.md``.

A search state is a rewrite of its parent (a new snapshot, derived from the parent),
the analyses of the transforms at the new state (updated from the parent's), its
canonical hash and its cost (the ``trn2`` model, updated from the parent's run). This
walks a path of single rewrites from a tiled matmul's root, as the search does
(``data_reuse`` and ``operand_merge`` alternating, the middle match each time), and
times each part of each state, wall clock and CPU time of this process (the machine
is shared: CPU time is less disturbed by the other work than the wall clock). The
root's own analyses and cost (done once per search) are outside the figures.

    ./run bench search_state                    # every size
    ./run bench search_state --baseline DIR     # also run each size on another checkout

``DIR`` holds ``nkigym_graph`` and ``nkigym_graph_plugins`` of another commit (e.g.
``git archive COMMIT | tar -x -C src``, then ``DIR/nkigym_graph -> src/nkigym_graph`` and
``DIR/nkigym_graph_plugins -> src/plugins``), imported instead of this checkout's; its rows
are labelled with ``DIR``'s name (name it after the commit).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from machine import peak_rss_mib, write_results

SIZES = {1024: "float32", 2048: "bfloat16", 4096: "bfloat16"}
STEPS = 12
PARTS = ("rewrite", "analysis", "hash", "cost")


def run_case(size: int) -> dict[str, Any]:
    import nkigym_graph as ng
    import nkigym_graph_plugins.trn2_cost as trn2_cost
    from nkigym_graph.cost import cost_models
    from nkigym_graph.ir.collector import collector_relaxed
    from nkigym_graph.ir.synthetic import tiled_matmul
    from nkigym_graph.plugin.transforms import matches_of

    if "trn2" not in cost_models():
        ng.register_plugin(trn2_cost, name="trn2_cost")
    model = cost_models()["trn2"]
    started = time.perf_counter()
    root = tiled_matmul(size, size, size, dtype=SIZES[size])
    transforms = [ng.get_transform(n) for n in ("data_reuse", "operand_merge", "dead_code")]
    with collector_relaxed():
        for transform in transforms:
            matches_of(root, transform)
        model.estimate(root)
        _ = root.canonical_hash
        setup = time.perf_counter() - started
        wall: dict[str, list[float]] = {part: [] for part in PARTS}
        cpu: dict[str, list[float]] = {part: [] for part in PARTS}
        program = root
        for step in range(STEPS):
            chosen = transforms[step % 2]
            matches = matches_of(program, chosen)
            if not len(matches):
                chosen = transforms[1 - step % 2]
                matches = matches_of(program, chosen)
            match = matches[len(matches) // 2]
            child = _timed(wall, cpu, "rewrite", ng.apply, program, chosen, match)
            _timed(wall, cpu, "analysis", _analyse, child, transforms, matches_of)
            _timed(wall, cpu, "hash", getattr, child, "canonical_hash")
            _timed(wall, cpu, "cost", model.estimate, child)
            program = child
    totals_wall = [sum(wall[p][i] for p in PARTS) for i in range(STEPS)]
    totals_cpu = [sum(cpu[p][i] for p in PARTS) for i in range(STEPS)]
    return {
        "size": size,
        "dtype": SIZES[size],
        "statements": len(root),
        "setup_s": setup,
        "wall_ms": {p: 1e3 * statistics.median(v) for p, v in wall.items()},
        "cpu_ms": {p: 1e3 * statistics.median(v) for p, v in cpu.items()},
        "state_wall_ms": 1e3 * statistics.median(totals_wall),
        "state_cpu_ms": 1e3 * statistics.median(totals_cpu),
        "state_cpu_max_ms": 1e3 * max(totals_cpu),
        "peak_rss_mib": peak_rss_mib(),
        "load": os.getloadavg()[0],
    }


def _timed(
    wall: dict[str, list[float]], cpu: dict[str, list[float]], part: str, work: Any, *args: Any
) -> Any:
    clock, cpu_clock = time.perf_counter(), time.process_time()
    result = work(*args)
    wall[part].append(time.perf_counter() - clock)
    cpu[part].append(time.process_time() - cpu_clock)
    return result


def _analyse(program: Any, transforms: list[Any], matches_of: Any) -> list[int]:
    return [len(matches_of(program, t)) for t in transforms]


def _run(size: int, baseline: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if baseline is not None:
        env["PYTHONPATH"] = baseline
    done = subprocess.run(
        [sys.executable, str(Path(__file__)), "case", str(size)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd="/" if baseline is not None else None,  # nothing of this checkout on the path
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _row(label: str, r: dict[str, Any]) -> str:
    parts = " | ".join(f"{r['cpu_ms'][p]:.1f} ({r['wall_ms'][p]:.1f})" for p in PARTS)
    return (
        f"| {label} | {r['size']}^3 {r['dtype']}, {r['statements']} | {parts} "
        f"| **{r['state_cpu_ms']:.1f}** ({r['state_wall_ms']:.1f}) | {r['state_cpu_max_ms']:.1f} "
        f"| {r['peak_rss_mib']:.0f} MiB | {r['load']:.1f} |"
    )


def main(argv: list[str]) -> None:
    if argv[:1] == ["case"]:
        print(json.dumps(run_case(int(argv[1]))))
        return
    baseline = argv[argv.index("--baseline") + 1] if "--baseline" in argv else None
    lines = [
        "| code | program, statements | "
        + " | ".join(f"{p} ms" for p in PARTS)
        + " | one state ms | slowest state ms | peak RSS | load |",
        "|---|---|" + "---|" * (len(PARTS) + 4),
    ]
    for size in SIZES:
        lines.append(_row("this checkout", _run(size, None)))
        if baseline is not None:
            lines.append(_row(f"baseline ({Path(baseline).name})", _run(size, baseline)))
    notes = (
        f"Medians over a path of {STEPS} single rewrites from the tiled root (`data_reuse` and "
        "`operand_merge` alternating, the middle match each time); each part as CPU time of the "
        "process, the wall clock in brackets; *one state* is rewrite + analysis + hash + cost "
        "(the median of the per-state sums), *slowest state* its maximum (CPU). The root's own "
        "analyses and cost are not included. *load* is the 1-minute load average when the case "
        "ended: the machine is shared, and wall-clock figures under load are inflated."
    )
    write_results("search_state", "One search state", "\n".join(lines), notes)


if __name__ == "__main__":
    main(sys.argv[1:])
