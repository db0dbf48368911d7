"""Data movement and allocation: ``load`` (HBM -> on-chip), ``store`` (on-chip -> HBM)
and ``alloc`` (an HBM output tensor).

Text forms::

    output = nkigym.ndarray((256, 256), dtype=np.float64)   # alloc
    tensor_0 = a[0:128, 0:128]                               # load
    output[0:128, 0:128] = tensor_2[0:128, 0:128]            # store
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nkigym_graph.ir.dtypes import DTYPES, choices
from nkigym_graph.ir.ops.base import Op, OperandText, same_shape
from nkigym_graph.ir.statement import Attrs, Statement

_TILE_AXES = ("partition", "free")


class _Copy(Op):
    operand_names = ("src", "dst")
    read_positions = (0,)
    write_positions = (1,)
    axes = (_TILE_AXES, _TILE_AXES)
    engine = "dma"

    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        return same_shape(read_shapes, "source")

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        return inputs[0]

    def format(self, stmt: Statement, operand: OperandText, dst: str) -> str:
        return f"{dst} = {operand(0)}"


class LoadOp(_Copy):
    """Copy a region of an HBM parameter into a new on-chip tile."""

    name = "load"
    on_chip_positions = (1,)
    result_keeps_input_dtype = True


class StoreOp(_Copy):
    """Copy an on-chip tile into a region of an HBM output."""

    name = "store"
    on_chip_positions = (0,)


class AllocOp(Op):
    """Allocate a zero-initialised HBM output tensor (``nkigym.ndarray``)."""

    name = "alloc"
    operand_names = ("tensor",)
    write_positions = (0,)
    axes = (_TILE_AXES,)
    keyword_attrs = ("dtype",)

    def check_attrs(self, attrs: Attrs) -> str | None:
        problem = super().check_attrs(attrs)
        if problem is None and _dtype_name(attrs) not in DTYPES:
            return f"an output's dtype is one of {choices()}, not {_dtype_name(attrs)!r}"
        return problem

    def mergeable_axes(self) -> frozenset[str]:
        return frozenset()

    def format(self, stmt: Statement, operand: OperandText, dst: str) -> str:
        shape = tuple(stop - start for start, stop in stmt.operands[0].slices)
        return f"{dst} = nkigym.ndarray({shape!r}, dtype={dtype_text(_dtype_name(stmt.attrs))})"


def _dtype_name(attrs: Attrs) -> str:
    return str(dict(attrs)["dtype"])


def dtype_text(name: str) -> str:
    """How a dtype prints: ``np.float32`` for numpy's own, a string otherwise."""
    return f"np.{name}" if hasattr(np, name) else f'"{name}"'


LOAD = LoadOp()
STORE = StoreOp()
ALLOC = AllocOp()
