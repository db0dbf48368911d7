"""How an op reads a tensor beyond transposing it: repeated side by side, as stacked
blocks, or spread (broadcast) from one row or column.

All are input TMs of the reading graph op, so the queue or producer keeps one copy:

- ``repeat`` copies side by side: ``broadcast: {c: repeat}`` (``[R, C]`` read as
  ``[R, repeat * C]``);
- ``blocks`` equal column blocks stacked in rows: ``hslice: blocks`` (the blocks become
  ``t`` slices) then ``vstack: blocks`` (the slices become rows), so ``[R, blocks * C]``
  is read as ``[blocks * R, C]``, block 0 on top.

A stitched weight tensor ``[K, w_1 | ... | w_N]`` read with ``blocks = N`` is
``[w_1; ...; w_N]``, and ``x`` read with ``repeat = N`` is ``[x | ... | x]``: their product
is ``sum_i x @ w_i`` (:mod:`.stitched`).

>>> Layout(blocks=3).read_shape((64, 192)), Layout(blocks=3).stored_shape((192, 64))
((192, 64), (64, 192))
>>> Layout(repeat=3).tms()
[{'broadcast': {'c': 3}}]
>>> Layout(spread=("c", 100)).read_shape((64, 1)), Layout(spread=("c", 100)).tms()
((64, 100), [{'tile_broadcast': 'c'}, {'broadcast': {'c': 4}}])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .shapes import tiles

Shape = tuple[int, int]


@dataclass(frozen=True)
class Layout:
    """``blocks`` column blocks stacked in rows, then ``repeat`` copies side by side; or
    ``spread``: ``("c", F)`` reads a ``[R, 1]`` column as ``[R, F]``, ``("r", P)`` a
    ``[1, C]`` row as ``[P, C]``."""

    repeat: int = 1
    blocks: int = 1
    spread: tuple[str, int] | None = None

    def tms(self) -> list[Any]:
        """The netlist TMs, in order."""
        tms: list[Any] = []
        if self.blocks > 1:
            tms += [{"hslice": self.blocks}, {"vstack": self.blocks}]
        if self.repeat > 1:
            tms.append({"broadcast": {"c": self.repeat}})
        if self.spread is not None:
            dim, size = self.spread
            tms.append({"tile_broadcast": dim})
            if tiles(size) > 1:
                tms.append({"broadcast": {dim: tiles(size)}})
        return tms

    def read_shape(self, stored: Shape) -> Shape:
        """The shape read from a tensor of shape ``stored``."""
        rows, cols = stored
        if self.spread is not None:
            dim, size = self.spread
            if (cols if dim == "c" else rows) != 1:
                raise ValueError(f"only a row or a column spreads, not a {stored} tensor")
            return (rows, size) if dim == "c" else (size, cols)
        if cols % self.blocks:
            raise ValueError(f"{cols} columns do not split into {self.blocks} equal blocks")
        return (rows * self.blocks, cols // self.blocks * self.repeat)

    def stored_shape(self, read: Shape) -> Shape:
        """The shape of the tensor read as ``read``."""
        rows, cols = read
        if self.spread is not None:
            return (rows, 1) if self.spread[0] == "c" else (1, cols)
        return (rows // self.blocks, cols // self.repeat * self.blocks)


PLAIN = Layout()
"""Read as stored."""
