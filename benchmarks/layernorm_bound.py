"""What bounds the layer norm (4096 x 4096 fp32) on the timing model, kernel structure by
kernel structure.

Prices each instruction a layer norm kernel can issue for one 128-row tile with the
profile's own per-instruction cost (``timing.schedule.compute_ns``: *profiled* prices,
not measurements), on each engine NKI lets run it:

- row sum: ``tensor_reduce`` (Vector) or an activation summing what it copies (Scalar);
- sum of squares: an activation squaring and summing (Scalar);
- or both row statistics at once: one ``bn_stats`` per 512-column chunk and a
  ``bn_aggr`` of their triples (Vector), giving the mean and the variance;
- plain form: ``tensor_scalar`` ``(x - mean) * rstd`` (Vector, Scalar or GpSimd), then
  ``* gamma`` and ``+ beta``, two-input ``tensor_tensor`` s (Vector or GpSimd);
- fused form: ``scalar_tensor_tensor`` s ``(x - mean) * gamma`` and ``(. * rstd) + beta``
  (Vector only, two inputs each);

then spreads the tiles' work over the Vector, Scalar and GpSimd Engines in the best
proportions (a linear program: which engine runs what share of each instruction, and
what share of the tiles takes the fused form or the ``bn_stats`` statistics) and reports
the busiest engine's time per tile, times the tiles, as a share of the DMA peak. Fill and
drain (the first tile's load, the last one's store) come on top. Each structure is priced
with whole-row instructions and with the four column pieces the emitter cuts store chains
into (a fixed cost each).
Results go to ``benchmarks/results/layernorm_bound.md``.

    .venv/bin/python benchmarks/layernorm_bound.py [--rows 4096] [--cols 4096]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from machine import write_results

from nkigym_graph.nki_sim.timing.constants import TRN2_TIMING
from nkigym_graph.nki_sim.timing.recorder import GPSIMD, SCALAR, VECTOR, Event
from nkigym_graph.nki_sim.timing.schedule import compute_ns

ENGINES = (VECTOR, SCALAR, GPSIMD)
BN_STATS_FMAX = 512
"""Elements per partition of one ``bn_stats`` at most (``nl.tile_size.bn_stats_fmax``)."""
DMA_PEAK_BYTES_PER_NS = TRN2_TIMING.dma_queues * TRN2_TIMING.dma_queue_bytes_per_ns

Item = dict[str, float]
"""One instruction's work for a tile: engine -> ns on it (the engines that may run it)."""


def price(engine: str, elements: int, inputs: int, pieces: int) -> float:
    """ns of ``pieces`` instructions covering ``elements`` per partition on ``engine``."""
    event = Event(0, "", 0, engine, elements=elements // pieces, inputs=inputs)
    return pieces * compute_ns(event, TRN2_TIMING)


def items(cols: int, pieces: int) -> dict[str, Item]:
    def on(inputs: int, *engines: str) -> Item:
        return {e: price(e, cols, inputs, pieces) for e in engines}

    chunks = -(-cols // BN_STATS_FMAX)
    bn_stats = chunks * price(VECTOR, min(cols, BN_STATS_FMAX), 1, 1)
    return {
        "row sum": on(1, VECTOR, SCALAR),
        "bn_stats + bn_aggr": {VECTOR: bn_stats + price(VECTOR, 6 * chunks, 1, 1)},
        "sum of squares": on(1, SCALAR),
        "(x - mean) * rstd": on(1, VECTOR, SCALAR, GPSIMD),
        "* gamma, + beta (each)": on(2, VECTOR, GPSIMD),
        "stt (each)": on(2, VECTOR),
    }


def maximise(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """max c.x subject to a x <= b, x >= 0, for b >= 0 (the origin is feasible): the simplex
    method with Bland's rule (no cycling on the degenerate vertices these problems have)."""
    m, n = a.shape
    tableau = np.zeros((m + 1, n + m + 1))
    tableau[:m, :n], tableau[:m, n : n + m], tableau[:m, -1] = a, np.eye(m), b
    tableau[m, :n] = -c
    basis = list(range(n, n + m))
    while True:
        entering = next((j for j in range(n + m) if tableau[m, j] < -1e-12), None)
        if entering is None:
            return float(tableau[m, -1])
        rows = [i for i in range(m) if tableau[i, entering] > 1e-12]
        if not rows:
            raise ValueError("unbounded")
        row = min(rows, key=lambda i: (tableau[i, -1] / tableau[i, entering], basis[i]))
        tableau[row] /= tableau[row, entering]
        for i in range(m + 1):
            if i != row:
                tableau[i] -= tableau[i, entering] * tableau[row]
        basis[row] = entering


def best_ns_per_tile(forms: list[list[Item]]) -> float:
    """The busiest engine's time per tile when each tile takes one of ``forms`` (lists of
    instructions) and the instructions are shared over their engines in the best proportions.

    Tiles per ns ``z`` is maximised: ``s_f`` tiles per ns take form ``f`` (``sum s_f >= z``),
    each of its instructions runs ``s_f`` times per ns over its engines, and each engine is
    busy at most all the time."""
    columns: list[tuple[int, int, str]] = []  # (form, instruction, engine) of each rate variable
    for f, form in enumerate(forms):
        for i, item in enumerate(form):
            columns.extend((f, i, e) for e in item)
    n = len(columns) + len(forms) + 1  # rates, form shares, z
    rows: list[np.ndarray] = []
    bounds: list[float] = []
    for engine in ENGINES:
        row = np.zeros(n)
        for k, (f, i, e) in enumerate(columns):
            if e == engine:
                row[k] = forms[f][i][e]
        rows.append(row)
        bounds.append(1.0)
    for f, form in enumerate(forms):
        for i in range(len(form)):  # the form's share is done by each of its instructions
            row = np.zeros(n)
            row[[k for k, (g, j, _) in enumerate(columns) if (g, j) == (f, i)]] = -1.0
            row[len(columns) + f] = 1.0
            rows.append(row)
            bounds.append(0.0)
    row = np.zeros(n)
    row[len(columns) : len(columns) + len(forms)] = -1.0
    row[-1] = 1.0  # z <= the forms' shares
    rows.append(row)
    bounds.append(0.0)
    objective = np.zeros(n)
    objective[-1] = 1.0
    return 1.0 / maximise(objective, np.array(rows), np.array(bounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=4096)
    args = parser.parse_args()
    rows, cols = args.rows, args.cols
    tiles = -(-rows // 128)
    dma_us = rows * cols * 4 / DMA_PEAK_BYTES_PER_NS / 1e3
    lines = ["| instruction (one 128-row tile) | " + " | ".join(ENGINES) + " |", "|---|---|---|---|"]
    for name, item in items(cols, 1).items():
        cells = [f"{item[e] / 1e3:.2f} us" if e in item else "-" for e in ENGINES]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    tile_dma = 128 * cols * 4 / DMA_PEAK_BYTES_PER_NS / 1e3
    lines += [f"| DMA, each way | {tile_dma:.2f} us | | |", ""]
    lines += [
        "| kernel structure | column pieces | busiest engine per tile | all tiles | of DMA peak |",
        "|---|---|---|---|---|",
    ]
    for pieces in (1, 4):
        work = items(cols, pieces)
        sums = [work["row sum"], work["sum of squares"]]
        moments = [work["bn_stats + bn_aggr"]]
        normalise = [work["(x - mean) * rstd"], *[work["* gamma, + beta (each)"]] * 2]
        fused = [*[work["stt (each)"]] * 2]
        for label, forms in (
            ("plain (no scalar_tensor_tensor)", [sums + normalise]),
            ("plain or fused, tile by tile", [sums + normalise, sums + fused]),
            ("bn_stats statistics, plain or fused", [moments + normalise, moments + fused]),
            (
                "either statistics, plain or fused",
                [sums + normalise, sums + fused, moments + normalise, moments + fused],
            ),
        ):
            per_tile = best_ns_per_tile(forms) / 1e3
            total = per_tile * tiles
            lines.append(
                f"| {label} | {pieces} | {per_tile:.2f} us | {total:.0f} us | {dma_us / total:.1%} |"
            )
    notes = (
        f"Layer norm of x {rows} x {cols} fp32 ({tiles} tiles of 128 rows); DMA-bound time "
        f"{dma_us:.1f} us (max(bytes read, bytes written) at the model's one-direction peak), so 70% "
        f"of the DMA peak is {dma_us / 0.7:.1f} us. Prices are the timing model's (`compute_ns`), "
        "not measurements; the bounds leave out fill and drain and every wait between engines, so a "
        "kernel issuing these instructions cannot beat them."
    )
    write_results(
        "layernorm_bound", f"Layer norm ({rows} x {cols} fp32): what bounds it", "\n".join(lines), notes
    )


if __name__ == "__main__":
    main()
