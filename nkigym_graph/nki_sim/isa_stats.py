"""Row statistics on the Vector Engine: ``bn_stats`` and ``bn_aggr``.

As the NKI ISA documents them (``nki.isa.bn_stats``, ``nki.isa.bn_aggr``, NeuronCore-v2/v3):

- ``bn_stats(dst, data)`` writes 6 values per partition: the count, mean and
  variance x count of the data's *even* elements (free positions 0, 2, 4, ...), then
  the same of its *odd* elements. The data's elements per partition may not exceed 512
  (``nl.tile_size.bn_stats_fmax``).
- ``bn_aggr(dst, data)`` reads one or more such (count, mean, variance x count) triples
  per partition (elements per partition a multiple of 3) and writes 2 values per
  partition: the mean and the (population) variance of all the elements they describe.
  A row longer than 512 is one ``bn_stats`` per 512-element chunk, each writing its 6
  values at its own offset of one tile, then one ``bn_aggr`` of that tile.

Both compute in float32 and cast to ``dst.dtype``. A half with no elements (the odd
half of a one-element chunk) is written as count 0, mean 0, variance x count 0, which
``bn_aggr`` weighs by its count of 0. The timing model times them like the Vector
Engine's other one-input instructions (fixed cycles plus one per element of ``data``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nkigym_graph.nki_sim.instruction import instruction
from nkigym_graph.nki_sim.operands import as_f32, check_dst, layout, on_chip, uses, write
from nkigym_graph.nki_sim.state import fail

Array = np.ndarray[Any, Any]

BN_STATS_FMAX = 512
"""Elements per partition one ``bn_stats`` reads at most (``nl.tile_size.bn_stats_fmax``)."""
STATS_PER_HALF = 3
"""(count, mean, variance x count) of one half (even or odd elements)."""


def _half_stats(values: Array) -> Array:
    """[P, 3]: count, mean and variance x count (the sum of squared deviations) of each row."""
    count = values.shape[1]
    out = np.zeros((values.shape[0], STATS_PER_HALF), dtype=np.float32)
    if count == 0:
        return out
    mean = values.sum(axis=1, dtype=np.float32) / np.float32(count)
    deviation = values - mean[:, None]
    out[:, 0] = count
    out[:, 1] = mean
    out[:, 2] = (deviation * deviation).sum(axis=1, dtype=np.float32)
    return out


@instruction("nisa.bn_stats")
def bn_stats(dst: Any, data: Any, name: Any = None) -> None:
    """``dst`` [P, 6] = (count, mean, variance x count) of the even, then the odd elements
    of each partition of ``data`` (at most 512 elements per partition)."""
    out, src = on_chip(dst, "dst"), on_chip(data, "data")
    uses(out, src)
    p, f = layout(src)
    if f > BN_STATS_FMAX:
        fail(
            "bn_stats.fmax",
            f"data {src.shape} has {f} elements per partition > {BN_STATS_FMAX} "
            "(nl.tile_size.bn_stats_fmax): one bn_stats per 512-element chunk, then bn_aggr",
        )
    check_dst(out, p, 2 * STATS_PER_HALF, f"bn_stats of data {src.shape} (6 statistics)")
    values = as_f32(src).reshape(p, f)
    write(out, np.concatenate([_half_stats(values[:, 0::2]), _half_stats(values[:, 1::2])], axis=1))


@instruction("nisa.bn_aggr")
def bn_aggr(dst: Any, data: Any, name: Any = None) -> None:
    """``dst`` [P, 2] = (mean, variance) of the elements the (count, mean, variance x
    count) triples of each partition of ``data`` describe."""
    out, src = on_chip(dst, "dst"), on_chip(data, "data")
    uses(out, src)
    p, f = layout(src)
    if f % STATS_PER_HALF:
        fail(
            "bn_aggr.triples",
            f"data {src.shape} has {f} elements per partition, not a multiple of 3 "
            "(bn_aggr reads (count, mean, variance x count) triples of bn_stats)",
        )
    check_dst(out, p, 2, f"bn_aggr of data {src.shape} (a mean and a variance)")
    triples = as_f32(src).reshape(p, f // STATS_PER_HALF, STATS_PER_HALF)
    counts, means, scaled = triples[..., 0], triples[..., 1], triples[..., 2]
    total = counts.sum(axis=1, dtype=np.float32)
    safe = np.where(total > 0, total, np.float32(1.0))
    mean = (counts * means).sum(axis=1, dtype=np.float32) / safe
    spread = counts * (means - mean[:, None]) ** 2
    variance = (scaled.sum(axis=1, dtype=np.float32) + spread.sum(axis=1, dtype=np.float32)) / safe
    write(out, np.stack([mean, variance], axis=1))
