"""The main job (``./run main``): a real example end to end with sensible defaults.

Tile ``a.T @ b`` for a 1024x1024x1024 matmul on Trn2, search rewrite sequences under the
Trn2 cost model (every program reached is verified numerically), verify the best against
numpy, emit it as an NKI kernel, run the kernel in the NKI simulator and profile it on the
timing model, and write the program, its DOT picture, the kernel, its Perfetto trace and
a summary to the output folder. The summary shows both speed figures: the cost model's
(what search ranked with) and the profile of the emitted kernel.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

import nkigym_graph as nkigym
from nkigym_graph.numeric.compare import relative_error
from nkigym_graph.text import write_program

T = TypeVar("T")


def matmul(a: Any, b: Any) -> Any:
    """The user's function: ``a.T @ b`` with ``a`` [K, M] and ``b`` [K, N]."""
    return nkigym.nc_matmul(a, b)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./run main", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out", help="output folder (default: out/)")
    parser.add_argument("--size", type=int, default=1024, help="M = K = N (default 1024)")
    parser.add_argument("--strategy", default="schedule", help="search strategy (default schedule)")
    parser.add_argument("--budget", type=int, default=None, help="search state budget")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    clock = Clock()

    shapes = {"a": (args.size, args.size), "b": (args.size, args.size)}
    program = clock.run("tile", lambda: nkigym.tile(matmul, shapes))
    result = clock.run(  # confirm=False: the job emits and profiles the best itself, below
        "search",
        lambda: nkigym.search(
            program, strategy=args.strategy, budget=args.budget, seed=args.seed, confirm=False
        ),
    )
    best = result.best

    rng = np.random.default_rng(args.seed)
    a = rng.standard_normal(shapes["a"]).astype(np.float32)
    b = rng.standard_normal(shapes["b"]).astype(np.float32)
    reference = a.astype(np.float64).T @ b.astype(np.float64)
    interpreted = clock.run("verify", lambda: nkigym.interpret(best, a=a, b=b))
    program_error = relative_error(interpreted, reference)

    artifact = clock.run("emit", lambda: nkigym.emit_artifact(best, backend="nki"))
    simulated, report = clock.run(
        "simulate", lambda: nkigym.nki_sim.simulate(artifact.text, a, b, report=True)
    )
    kernel_error = relative_error(simulated, reference)

    write_program(best, out / "best.nkg")
    (out / "kernel.py").write_text(artifact.text)
    picture = nkigym.write_dot(best, out / ("best.svg" if shutil.which("dot") else "best.dot"))
    profile = report.profile
    trace = profile.write_trace(out / "kernel_trace.json")

    summary = [
        f"matmul {args.size}^3 on {program.target.name}",
        f"tiled          {len(program):,} statements",
        f"search         {args.strategy}: {result.stats}",
        f"best           {len(best):,} statements after {len(result.path)} rewrites",
        f"cost (model)   {result.cost}",
        f"verified       interpreter vs numpy: max relative error {program_error:.1e}",
        f"NKI kernel     {artifact.facts.get('lines', len(artifact.text.splitlines()))} lines; "
        f"simulated vs numpy: max relative error {kernel_error:.1e}; {report}",
        f"speed          modeled (cost model) MFU {result.cost.mfu:.1%}; profiled (timing model of the "
        f"emitted kernel, not measured) MFU {profile.mfu:.1%}, {profile.total_us:.1f} us, {profile.critical}",
        f"written        {out / 'best.nkg'}, {out / 'kernel.py'}, {picture}, {trace} (Perfetto trace)",
        f"time           {clock}",
    ]
    (out / "summary.txt").write_text("\n".join(summary) + "\n")
    print("\n".join(summary))
    ok = program_error < 1e-5 and kernel_error < 1e-4
    if not ok:
        print("FAILED: the results do not match numpy", file=sys.stderr)
    return 0 if ok else 1


class Clock:
    """Times named phases."""

    def __init__(self) -> None:
        self.phases: list[tuple[str, float]] = []

    def run(self, name: str, step: Callable[[], T]) -> T:
        """Run ``step``, timing it as phase ``name``."""
        start = time.perf_counter()
        value = step()
        self.phases.append((name, time.perf_counter() - start))
        return value

    def __str__(self) -> str:
        total = sum(seconds for _, seconds in self.phases)
        parts = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in self.phases)
        return f"{total:.1f} s ({parts})"


if __name__ == "__main__":
    raise SystemExit(main())
