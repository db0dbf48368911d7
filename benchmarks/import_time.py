"""Import-time benchmark: ``import nkigym_graph``, and the first use of a few public names.

Each case runs in a fresh interpreter (``-X importtime`` and a wall clock around the
statement); the table shows the median and the fastest of ``--repeat`` runs, in
milliseconds. ``import nkigym_graph`` is the package's own line of ``-X importtime``
(cumulative: everything it imports). The first-use rows time the statement after the
package is imported: the module a name lives in, with its own imports, loads then.

``--before DIR`` also measures a checkout of an earlier version (the package in DIR,
e.g. ``git archive <commit> nkigym_graph | tar -x -C DIR``) in the same way, for a
before/after table. The markdown table is printed and written to
``benchmarks/results/import_time.md``.

    .venv/bin/python benchmarks/import_time.py [--repeat 15] [--before DIR --before-name NAME]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from machine import write_results

ROOT = Path(__file__).parents[1]

CASES = {
    "import nkigym_graph": "",
    "first use of nkigym_graph.tile": "nkigym_graph.tile",
    "first use of nkigym_graph.Program": "nkigym_graph.Program",
    "first use of nkigym_graph.saturate": "nkigym_graph.saturate",
    "first use of nkigym_graph.search": "nkigym_graph.search",
    "first use of nkigym_graph.nki_sim": "nkigym_graph.nki_sim",
}
"""Case -> the statement timed after ``import nkigym_graph`` (empty: the import itself)."""

CHILD = """
import json, sys, time
start = time.perf_counter()
import nkigym_graph
imported = time.perf_counter()
{statement}
used = time.perf_counter()
print(json.dumps({{"import_s": imported - start, "use_s": used - imported}}))
"""


def _package_line(stderr: str) -> float:
    """Seconds of the ``nkigym_graph`` line of ``-X importtime`` (cumulative)."""
    for line in stderr.splitlines():
        fields = [f.strip() for f in line.removeprefix("import time:").split("|")]
        if len(fields) == 3 and fields[2] == "nkigym_graph":
            return int(fields[1]) / 1e6
    raise RuntimeError(f"no nkigym_graph line in -X importtime output:\n{stderr[-2000:]}")


def run_once(statement: str, source: Path) -> float:
    """Seconds of one case in a fresh interpreter importing the package from ``source``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", CHILD.format(statement=statement or "pass")],
        cwd=source,  # the package is imported from the working directory first
        check=True,
        capture_output=True,
        text=True,
    )
    if not statement:
        return _package_line(done.stderr)
    return float(json.loads(done.stdout)["use_s"])


def measure(source: Path, repeat: int) -> dict[str, tuple[float, float]]:
    """Case -> (median, fastest) seconds."""
    out = {}
    for case, statement in CASES.items():
        times = [run_once(statement, source) for _ in range(repeat)]
        out[case] = (statistics.median(times), min(times))
    return out


def table(
    after: dict[str, tuple[float, float]], before: dict[str, tuple[float, float]] | None, name: str
) -> str:
    head = "| case | median (ms) | fastest (ms) |"
    rule = "|---|---:|---:|"
    if before is not None:
        head = f"| case | {name}: median (ms) | {name}: fastest (ms) | now: median (ms) | now: fastest (ms) |"
        rule = "|---|---:|---:|---:|---:|"
    lines = [head, rule]
    for case in CASES:
        now = f"{after[case][0] * 1e3:.1f} | {after[case][1] * 1e3:.1f}"
        if before is None:
            lines.append(f"| {case} | {now} |")
        else:
            then = f"{before[case][0] * 1e3:.1f} | {before[case][1] * 1e3:.1f}"
            lines.append(f"| {case} | {then} | {now} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--before", type=Path, help="a directory holding an earlier nkigym_graph package")
    parser.add_argument("--before-name", default="before")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    before = measure(args.before, args.repeat) if args.before is not None else None
    after = measure(ROOT, args.repeat)
    report = table(after, before, args.before_name)
    notes = (
        f"Fresh interpreter per run, {args.repeat} runs per case. `import nkigym_graph`: the "
        "package's cumulative line of `python -X importtime`. First use: wall time of the "
        "statement right after `import nkigym_graph` (the modules that name needs load then; "
        "before the lazy package they had loaded with the package, so they cost about nothing). "
        "The built-in plugins load later still, when a registry is first asked."
    )
    if args.no_write:
        print(report)
        return
    write_results("import_time", "Import time of nkigym_graph", report, notes)


if __name__ == "__main__":
    main()
