"""The workloads beyond matmul at their named sizes: the profiled speed of each one's best
kernel, next to the predecessor's published hardware figures.

For each workload of ``examples/workloads.py`` (softmax, layer norm, RMS norm, RMS norm +
matmul, MLP with gelu, attention and causal attention, each two-pass and online): tile,
greedy search, saturate (and for a workload marked ``schedule``, RMS norm + matmul,
the ``schedule`` strategy's search of kernel schedules), emit each as an NKI kernel
(``reorder=True``: engine choice and list-scheduled order), keep the fastest by
``nki_sim.profile`` (the calibrated timing model: *profiled*, not measured), check it
against numpy, and record

- matmul workloads: profiled MFU (matmul FLOPs over the run at the dtype's peak); for
  causal attention, the FLOPs it needs (``Q K^T`` and ``P V`` over the keys each query
  sees, diagonal included: ``4 d * S (S + 1) / 2``), not those of the block-triangular
  tiles the kernel runs nor of the full square (the profile's own figure, executed
  matmul FLOPs, is given beside it);
- memory-bound workloads: DMA-bandwidth utilisation, the run's DMA-bound time over the
  profiled time. The model's peak is 16 queues x 23 B/ns = 368 GB/s per direction
  (inbound ring for loads, outbound for stores, running side by side), so the DMA-bound
  time of a kernel reading R and writing W bytes is max(R, W) / 368 GB/s;

plus the cost model's (*modeled*) figure for the same program and what bounds the run.
Results go to ``benchmarks/results/workloads.md``.

    .venv/bin/python benchmarks/workloads.py [--only softmax attention ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "examples"))

from machine import write_results
from workloads import WORKLOADS, Outcome, causal_attention_flops, run_workload

from nkigym_graph.ir.dtypes import itemsize

DMA_PEAK_BYTES_PER_NS = 16 * 23.0
"""One direction of the timing model's DMA (16 queues, 23 B/ns each)."""
PREDECESSOR = {
    "rmsnorm_matmul": "~79-80% MFU (hardware, 2048^3 bf16)",
    "attention": "causal: compiler 13-18%, hand library kernel 30% (seq 2k) MFU (hardware)",
    "attention_online": "causal: compiler 13-18%, hand library kernel 30% (seq 2k) MFU (hardware)",
    "causal_attention": "compiler 13-18%, hand library kernel 30% (seq 2k) MFU (hardware)",
    "causal_attention_online": "compiler 13-18%, hand library kernel 30% (seq 2k) MFU (hardware)",
}
GOALS = {
    "softmax": ">= 70% of DMA peak",
    "layernorm": ">= 70% of DMA peak",
    "rmsnorm": "(memory-bound)",
    "rmsnorm_matmul": ">= 80% MFU",
    "mlp": "-",
    "attention": ">= 50% MFU (non-causal)",
    "attention_online": ">= 50% MFU (non-causal)",
    "causal_attention": "(stretch)",
    "causal_attention_online": "(stretch)",
}
RUNS = {name: (name, False) for name in WORKLOADS} | {
    "attention_online": ("attention", True),
    "causal_attention_online": ("causal_attention", True),
}
NEEDED_FLOPS = {"causal_attention": causal_attention_flops}
"""Workloads whose MFU counts the FLOPs they need rather than those the kernel executes."""


def dma_bound_us(outcome: Outcome) -> float:
    """max(bytes read, bytes written) / one direction's peak, in us."""
    size = itemsize(outcome.dtype)
    read = sum(rows * cols for rows, cols in outcome.shapes.values()) * size
    out_rows = next(iter(outcome.shapes.values()))[0]
    written = out_rows * _output_cols(outcome) * size
    return max(read, written) / DMA_PEAK_BYTES_PER_NS / 1e3


def _output_cols(outcome: Outcome) -> int:
    shapes = outcome.shapes
    if outcome.name in ("softmax", "layernorm", "rmsnorm"):
        return shapes["x"][1]
    if outcome.name == "rmsnorm_matmul":
        return shapes["w"][1]
    if outcome.name == "mlp":
        return shapes["w2"][1]
    return shapes["v"][1]


def row(label: str, outcome: Outcome, seconds: float) -> str:
    prof = outcome.profile
    workload = WORKLOADS[outcome.name]
    shapes = ", ".join(f"{k} {r}x{c}" for k, (r, c) in outcome.shapes.items())
    needed = NEEDED_FLOPS.get(outcome.name)
    if needed is not None:
        flops = needed(outcome.shapes)
        peak = prof.peak_tflops * 1e12
        figure = (
            f"**{flops / (prof.total_ns * 1e-9) / peak:.1%} MFU** (needed FLOPs; executed {prof.mfu:.1%})"
        )
        modeled = f"{flops / outcome.modeled.seconds / peak:.1%} MFU (needed FLOPs)"
    elif workload.yardstick == "mfu":
        figure = f"**{prof.mfu:.1%} MFU**"
        modeled = f"{outcome.modeled.mfu:.1%} MFU"
    else:
        bound = dma_bound_us(outcome)
        figure = f"**{bound / prof.total_us:.1%} of DMA peak** ({prof.dma_gbps:.0f} GB/s)"
        modeled = f"{bound / (outcome.modeled.seconds * 1e6):.1%} of DMA peak"
    busy = ", ".join(f"{k} {v:.0%}" for k, v in prof.utilisation.items() if v >= 0.05)
    tried = "; ".join(f"{k} {v}" for k, v in outcome.candidates.items())
    return (
        f"| {label} | {shapes}, {outcome.dtype} | {outcome.kernel}, {outcome.statements} | "
        f"{prof.total_us:.1f} us | {figure} | {modeled} | {prof.critical}; busy {busy} | {tried} | "
        f"{outcome.error:.1e} | {GOALS[label]} | {PREDECESSOR.get(label, '-')} | {seconds:.0f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=list(RUNS), choices=list(RUNS))
    args = parser.parse_args()
    lines = [
        "| workload | shapes | kernel from, statements | profiled | profiled figure | modeled figure | "
        "bound by (profiled) | candidates (profiled) | rel. error vs numpy | goal | predecessor (hardware) | "
        "wall time |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    with TemporaryDirectory() as tmp:
        for label in args.only:
            name, online = RUNS[label]
            start = time.perf_counter()
            outcome = run_workload(WORKLOADS[name], Path(tmp), online=online)
            lines.append(row(label, outcome, time.perf_counter() - start))
            print(lines[-1], flush=True)
    notes = (
        "*Profiled* figures come from `nki_sim.profile`, the timing model calibrated against the "
        "hardware ladder in calibration.md; *modeled* from the trn2 cost model search ranks with; "
        "neither is a measurement. The predecessor's figures are hardware measurements (REFERENCE.md). "
        "Each run tiles, searches greedily, saturates (RMS norm + matmul also searches kernel schedules "
        "with the `schedule` strategy), emits each program with `reorder=True` and keeps "
        "the fastest kernel; the modeled figure is the trn2 cost model's, which prices each op on its "
        "default engine in program order, each wait for another engine's result with the hand-over "
        "between engines the profile charges (0.5 us), so it does not see the engine choice or the "
        "reordering, which hides many of those hand-overs "
        "(a scheduled program's modeled figure times the kernel the backend emits for its plan, engine "
        "choices included, so it equals that kernel's profile); "
        "it takes the kernel's tile dtypes (a bf16 kernel's activations of matmul results are bf16), "
        "and it counts PSUM tiles live in program order, so it ranks the saturated MLP infeasible "
        "(76 KiB of PSUM of 16) where the emitter's reordering fits it. "
        "The Buda netlist of each workload is checked and evaluated at a small size (tests and examples); "
        "causal attention has none (`affine_select` has no Buda form). Causal attention's MFU counts the "
        "FLOPs it needs, 4 d S (S + 1) / 2 (each query's keys up to and including its own), over the "
        "profiled time at the bf16 peak; the profile's own MFU (the matmul FLOPs the kernel executes: "
        "whole 128-key tiles up to the diagonal) is given beside it. Layer norm's kernel adds the `beta` "
        "row with DMA transfers that add into their destination (`dst_rmw_op=nl.add`): into the tile on "
        "chip, or into the output region where a DMA stored the row first; the timing model prices them "
        "as copies of the same bytes, a price the calibration does not check; without them it profiles "
        "at 279.4 us (65.3% of DMA peak), with the in-place ones only at 262.1 us (69.6%)."
    )
    write_results("workloads", "Workloads beyond matmul (named sizes)", "\n".join(lines), notes)


if __name__ == "__main__":
    main()
