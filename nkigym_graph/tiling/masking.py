"""Masked tiles: what tiling does not compute.

A mask (``affine_select``) decides per tile from the tile's position
(``AffineSelectOp.coverage``): a tile it keeps whole needs no mask statement (its
readers read the unmasked tile), a tile it masks whole is a ``Filled`` tile -- every
element the fill value, nothing computed, not even the tile it masks. A ``Filled``
input propagates through the statements reading it wherever the op says the result is
constant whatever its other operands hold (``Op.constant_result``: ``exp(-inf * s + b)``
is 0, a transpose of zeros is zeros, a matmul with a zero operand is zero, the maximum
of ``-inf`` s is ``-inf``), and a reduction skips a chunk whose partial result is the
identity of its fold (0 for sums and matmul accumulation, ``-inf`` for a maximum). So
causal attention tiled computes no score, exponential or ``P @ V`` product above the
diagonal::

    s = affine_select(nc_matmul(q_t, k_t))          # key tile j > query tile i: Filled(-inf)
    m = tensor_reduce(s, op="max")                  # that chunk's partial max -inf: skipped
    e = activation(s, op="exp", bias=-m)            # Filled(0)
    o = nc_matmul(nc_transpose(e), v)               # lhs Filled(0): the K chunk is skipped

Whatever needs a ``Filled`` tile's elements (a store, an op without a constant result)
asks for them (``materialise``): the statements are then emitted as without the mask's
help. The result is exactly what the untiled function computes: skipped terms add 0 or
take a maximum with ``-inf``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from nkigym_graph.ir.ops.base import Op
from nkigym_graph.ir.statement import Attrs, Operand

if TYPE_CHECKING:
    from nkigym_graph.tiling.trace import Call


@runtime_checkable
class MaskByPosition(Protocol):
    """An op that keeps or masks elements by their position (``AffineSelectOp``)."""

    def coverage(self, attrs: Attrs, rows: tuple[int, int], cols: tuple[int, int]) -> str:
        """``"all"``, ``"none"`` or ``"some"``: which elements of the region it keeps."""

    def tile_attrs(self, attrs: Attrs, row: int, col: int) -> Attrs:
        """Its attributes for the tile whose first element is at ``(row, col)``."""


class Filled:
    """A tile every element of which is ``value``; ``materialise()`` emits (once) the
    statements computing it and returns the operand reading it."""

    __slots__ = ("_emit", "_operand", "value")

    def __init__(self, value: float, emit: Callable[[], Operand]) -> None:
        self.value = value
        self._emit = emit
        self._operand: Operand | None = None

    def materialise(self) -> Operand:
        """The tile computed (its statements emitted the first time)."""
        if self._operand is None:
            self._operand = self._emit()
        return self._operand

    def __repr__(self) -> str:
        return f"Filled({self.value})"


Tile = Operand | Filled
"""What a tile function returns: the operand reading the tile, or a known constant tile."""


def operand(tile: Tile) -> Operand:
    """``tile`` as an operand (a ``Filled`` tile materialised)."""
    return tile.materialise() if isinstance(tile, Filled) else tile


def fillable_calls(calls: Iterable[Call]) -> set[Call]:
    """The calls (in trace order) whose tiles may be ``Filled``: masks by position and
    every call reading one of those."""
    found: set[Call] = set()
    for call in calls:
        if isinstance(call.op, MaskByPosition) or any(t.source in found for t in call.inputs):
            found.add(call)
    return found


def constant_of(op: Op, attrs: Attrs, tiles: Sequence[Tile]) -> float | None:
    """The value of every element of ``op``'s result on ``tiles`` when a ``Filled`` one
    decides it (``Op.constant_result``) and every other tile is computed or ``Filled``
    with a finite value (``constant_result`` holds for finite other operands only:
    ``exp(-inf + inf)`` is nan, not 0); else None."""
    for position, tile in enumerate(tiles):
        if not isinstance(tile, Filled):
            continue
        others = (t for i, t in enumerate(tiles) if i != position)
        if all(not isinstance(t, Filled) or math.isfinite(t.value) for t in others):
            known = op.constant_result(attrs, position, tile.value)
            if known is not None:
                return known
    return None


def fold_identity(fold_op: str | None) -> float | None:
    """The partial result a fold ignores: 0 for ``+=`` (``fold_op`` None), ``-inf`` for
    a ``maximum`` fold, ``inf`` for ``minimum``; None for anything else."""
    return {None: 0.0, "maximum": float("-inf"), "minimum": float("inf")}.get(fold_op)
