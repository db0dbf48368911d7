"""Spreading a ``[1, F]`` row over the partitions, for ``tensor_tensor(data, row)``.

The Vector Engine works partition by partition, so a row every partition reads must be
in every partition. The Tensor Engine spreads it: ``ones[1, P].T @ row[1, F]`` is the
``[P, F]`` tile whose every partition is the row (a matmul contracting one partition,
N <= 512 columns per PSUM bank, in ``SPREAD_BANKS`` banks by turns), copied to SBUF. The
spread tile is kept and reused until the row's variable is written again, so a weight row
loaded once is spread once; column pieces of a row loaded whole read columns of its spread.
"""

from __future__ import annotations

from nkigym_graph.ir.statement import Operand

from .builder import KernelBuilder
from .ir import Ref, Tile, const_slices, whole

SPREAD_BANKS = 4
"""PSUM tiles the spreads take turns in (a matmul waits for the copy out of its tile two
banks before), so that interleaved instructions never hold more PSUM."""
DEFAULT_BANK_COLUMNS = 512
"""Columns of one matmul result (one 2 KiB PSUM bank of fp32) when the target has no limit."""


def spread_row(kb: KernelBuilder, operand: Operand, partitions: int, statement: str) -> Ref:
    """A ``[partitions, F]`` SBUF region holding the row ``operand`` in every partition."""
    whole_row = _whole_row(kb, operand)
    key = (operand.var, whole_row.slices, partitions)
    tile = kb.spread.get(key)
    if tile is None:
        tile = kb.spread[key] = _spread(kb, whole_row, partitions, statement)
    (_, _), (f0, f1) = operand.slices
    (_, _), (w0, _) = whole_row.slices
    return Ref(tile, const_slices(((0, partitions), (f0 - w0, f1 - w0))))


def _whole_row(kb: KernelBuilder, operand: Operand) -> Operand:
    """All of the row ``operand`` is a part of, when one statement writes that row whole
    (column pieces of a row then share one spread), else ``operand``."""
    writers = kb.program.writers_of(operand.var)
    if len(writers) != 1:
        return operand
    written = kb.program[writers[0]].dst
    (r0, r1), (f0, f1) = operand.slices
    (w_r0, w_r1), (w0, w1) = written.slices
    if (w_r0, w_r1) != (r0, r1) or not w0 <= f0 <= f1 <= w1:
        return operand
    return written


def _spread(kb: KernelBuilder, operand: Operand, partitions: int, statement: str) -> Tile:
    row = kb.read(operand, statement, sbuf=True)
    (r0, r1), (f0, f1) = operand.slices
    dtype = kb.dtype_of(row)
    ones = kb.ones_row(dtype, partitions)
    tile = kb.new_tile(f"{operand.var}_spread", (partitions, f1 - f0), dtype, "sbuf")
    bank = kb.target.limit("nc_matmul", "N") or DEFAULT_BANK_COLUMNS
    for c0 in range(0, f1 - f0, bank):
        c1 = min(f1 - f0, c0 + bank)
        slot = ("spread_psum", partitions, c1 - c0, (c0 // bank) % SPREAD_BANKS)
        psum = kb.constant_tile(slot, "spread_psum", (partitions, c1 - c0), "nl.float32", "psum")
        moving = Ref(row.base, const_slices(((r0, r1), (f0 + c0, f0 + c1))), row.index)
        kb.call(
            "nisa.nc_matmul",
            ("dst", Ref(psum, whole(psum.shape))),
            ("stationary", Ref(ones, whole(ones.shape))),
            ("moving", moving),
            ("accumulate", "False"),  # the bank held an earlier piece
        )
        kb.call(
            "nisa.tensor_copy",
            ("dst", Ref(tile, const_slices(((0, partitions), (c0, c1))))),
            ("src", Ref(psum, whole(psum.shape))),
        )
    return tile
