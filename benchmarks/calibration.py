"""Calibration of the timing model (``nki_sim.profile``) against published hardware.

Profiles our own kernel for each structure of REFERENCE.md's "measured kernel-structure
ladder" (C = A.T @ B, 2048^3 bf16, trn2) and prints the profiled MFU next to the
published one; then the NKI tutorial's matmul progression (basic, tiled, hoisted loads,
blocked free dimensions, fully optimised), which must come out in increasing order of
speed; then the constants table the model prices with. Every kernel's output is checked
against numpy. Results go to ``benchmarks/results/calibration.md``.

    .venv/bin/python benchmarks/calibration.py
"""

from __future__ import annotations

import ast
import itertools
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from calibration_kernels import LADDER, TUTORIAL
from machine import write_results

from nkigym_graph.nki_sim import Profile, profile
from nkigym_graph.nki_sim.timing import TRN2_TIMING, constants

BF16 = np.dtype(ml_dtypes.bfloat16)
TOLERANCE_PP = 5.0


def run(source: str, k: int, m: int, n: int) -> tuple[Profile, float]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m)).astype(BF16)
    b = rng.standard_normal((k, n)).astype(BF16)
    start = time.perf_counter()
    prof = profile(source, a, b)
    seconds = time.perf_counter() - start
    want = a.astype(np.float32).T @ b.astype(np.float32)
    got = np.asarray(prof.outputs, dtype=np.float32)
    error = float(np.abs(got - want).max() / np.abs(want).max())
    assert error < 2e-2, f"kernel result differs from numpy (relative error {error:.1e})"
    return prof, seconds


def constant_docs() -> dict[str, str]:
    """Each constant's docstring, read from constants.py."""
    tree = ast.parse(Path(constants.__file__).read_text())
    docs: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "TimingConstants":
            body = node.body
            for stmt, nxt in itertools.pairwise(body):
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(stmt.target, ast.Name)
                    and isinstance(nxt, ast.Expr)
                    and isinstance(nxt.value, ast.Constant)
                ):
                    docs[stmt.target.id] = " ".join(str(nxt.value.value).split())
    return docs


TIE_NOTE = """### Why rungs 5 and 6 tie

The two kernels issue the same 1024 matmuls, PSUM drains (Scalar), loads (40 MiB) and stores (8 MiB); they
differ only in the SBUF output block. Rung 5 has one: the first K block's partials are
copied into it, the second's added, and the next N block's first copy waits for the
block's store (write-after-read, ~7.8 us each time, 3 times). Rung 6 rotates 4 blocks,
zeroes each on GpSimd and adds every partial (34 us more Vector work, 47 us of GpSimd).
In the model both run the Tensor Engine without a gap from the first matmul (7.8 us, the
first loads) to the last (233.1 us), then the same drain-add-store tail of the last
block (10.6 us): 243.7 us each. Rung 5's store wait never reaches the Tensor Engine: 4
PSUM accumulators and 4 SBUF partials (8 tiles, ~14 us of matmuls) cover it; only the
Scalar Engine waits (11 us, 9 times). The published gap is 0.32 pp, about 0.9 us in
244 us. A mechanism that separated them would have to expose rung 5's store wait to the
Tensor Engine (fewer buffers in flight than the kernel declares, a store far slower than
the documented DMA rates), or charge rung 5's extra semaphore waits; none is documented
in REFERENCE.md, and the one physical difference the model does price (rung 6's extra
Vector and GpSimd work, its SBUF traffic) points the other way. So the tie stays: an
honest tie rather than a constant tuned only to split these two rungs.

"""


def main() -> None:
    rows = [
        "| rung | structure | published MFU | profiled MFU | difference | critical resource |",
        "|---|---|---|---|---|---|",
    ]
    profiled: list[float] = []
    failures: list[str] = []
    for i, (structure, source, published) in enumerate(LADDER, start=1):
        prof, seconds = run(source, 2048, 2048, 2048)
        mfu = prof.mfu * 100
        profiled.append(mfu)
        diff = mfu - published
        if abs(diff) > TOLERANCE_PP:
            failures.append(f"rung {i} off by {diff:+.1f} pp")
        rows.append(
            f"| {i} | {structure} | {published:.2f}% | {mfu:.1f}% | {diff:+.1f} pp | {prof.critical} |"
        )
        print(f"rung {i}: {mfu:.1f}% profiled vs {published}% published ({seconds:.1f} s)", flush=True)
    order = all(a <= b for a, b in itertools.pairwise(profiled))
    strict = all(a < b for a, b in itertools.pairwise(profiled))
    if not order:
        failures.append("ladder out of the published order")
    tut = [
        "| step | shape (K, M, N) | profiled MFU | time (us) | critical resource |",
        "|---|---|---|---|---|",
    ]
    tut_mfu: list[float] = []
    for step, source, (k, m, n) in TUTORIAL:
        prof, _ = run(source, k, m, n)
        tut_mfu.append(prof.mfu * 100)
        tut.append(f"| {step} | {k}, {m}, {n} | {prof.mfu:.1%} | {prof.total_us:.1f} | {prof.critical} |")
    monotone = all(a < b for a, b in itertools.pairwise(tut_mfu))
    if not monotone:
        failures.append("tutorial progression not monotone")
    docs = constant_docs()
    table = ["| constant | value | source / reasoning |", "|---|---|---|"]
    for name, value in TRN2_TIMING.as_rows():
        table.append(f"| `{name}` | {value} | {docs.get(name, '')} |")
    order_text = (
        "in the published order (strictly)"
        if strict
        else "in the published order, with ties where the model cannot tell rungs apart"
        if order
        else "NOT in the published order"
    )
    verdict = (
        f"Every rung within {TOLERANCE_PP:.0f} pp of its published figure and {order_text}; "
        f"the tutorial progression is {'monotone' if monotone else 'NOT monotone'}."
        if not failures
        else "Failures: " + "; ".join(failures)
    )
    text = (
        "## Measured kernel-structure ladder (C = A.T @ B, 2048^3 bf16, trn2)\n\n"
        "Published MFU: hardware measurements (REFERENCE.md). Profiled MFU: "
        "`nki_sim.profile` of our own kernel for each structure "
        "(`benchmarks/calibration_kernels.py`), a model, not a measurement.\n\n"
        + "\n".join(rows)
        + f"\n\n{verdict}\n\n"
        + TIE_NOTE
        + "## NKI tutorial matmul progression (bf16; profiled)\n\n"
        + "\n".join(tut)
        + "\n\n## The constants (`nkigym_graph/nki_sim/timing/constants.py`, trn2)\n\n"
        + "\n".join(table)
    )
    write_results("calibration", "Timing-model calibration (profiled vs published)", text)
    if failures:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
