"""Constant tensors a netlist needs for ops Buda has no scalar form of.

Buda ops take tensors, not numbers, so ``tensor_scalar(x, c)`` becomes a binary op with a
constant input, a row sum becomes a matmul with a column of ones (the device reduces
with ``max`` only), and masks set the tile padding past a row or column to a known value
(:class:`PaddingMask`; the lowest value under a row maximum). Constants live in host
queues the runtime fills before a run;
:func:`~nkigym_graph_plugins.buda_backend.host.netlist_inputs` builds their contents from
the descriptions here, which the artifact carries in ``facts["host_queues"]``. The host
writes a constant saturated to the finite range of its queue's data format, so ``-inf``
is written as the format's most negative finite value.

>>> mask = PaddingMask("c", 33, inside=0.0, outside=-math.inf)
>>> mask.queue_shape(100, 33), mask.broadcast(100, 33)
((32, 64), (4, 1))
>>> constant_array(mask.describe(), (32, 64), "Float16")[5, 31:35].tolist()
[0.0, 0.0, -65504.0, -65504.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import ml_dtypes
import numpy as np

from nkigym_graph.buda.quantize import BFP_MAGNITUDE_BITS, BLOCK, FLOAT_DTYPES, quantize

from .shapes import TILE, padded, tiles


@dataclass(frozen=True)
class Fill:
    """Every element equal to ``value``: one tile in its queue, broadcast by the reading op."""

    kind: ClassVar[str] = "fill"
    value: float

    def queue_shape(self, rows: int, cols: int) -> tuple[int, int]:
        return (TILE, TILE)

    def broadcast(self, rows: int, cols: int) -> tuple[int, int]:
        """Tile repeats (r, c) that spread the queue over a ``rows x cols`` operand."""
        return (padded(rows) // TILE, padded(cols) // TILE)

    def array(self, shape: tuple[int, int]) -> np.ndarray:
        return np.full(shape, self.value)

    def describe(self) -> dict[str, Any]:
        return {"constant": self.kind, "value": self.value}

    def text(self) -> str:
        return f"constant {self.value!r} (one tile, broadcast by the reading op)"

    def label(self) -> str:
        return "fill"


@dataclass(frozen=True)
class ColumnOnes:
    """``[rows, 1]`` ones (zero in the tile padding): ``x @ ones`` is the row sum of ``x``,
    in tile column 0 like a Buda reduce."""

    kind: ClassVar[str] = "column_ones"
    rows: int

    def queue_shape(self, rows: int, cols: int) -> tuple[int, int]:
        return (padded(self.rows), TILE)

    def broadcast(self, rows: int, cols: int) -> tuple[int, int]:
        return (1, 1)

    def array(self, shape: tuple[int, int]) -> np.ndarray:
        out = np.zeros(shape)
        out[: self.rows, 0] = 1.0
        return out

    def describe(self) -> dict[str, Any]:
        return {"constant": self.kind, "rows": self.rows}

    def text(self) -> str:
        return f"constant column of {self.rows} ones (row sums are matmuls with it)"

    def label(self) -> str:
        return "ones"


@dataclass(frozen=True)
class PaddingMask:
    """``inside`` in the first ``size`` columns (``axis`` c) or rows (r) and ``outside`` in
    the tile padding past them. The queue is one row of tiles for c (one column for r),
    all its rows (columns) alike, so a ``broadcast`` spreads it over an operand of any
    number of rows (columns). A multiply by one mask and an add of another set the
    padding to a known value whatever it held (:mod:`.lowering`)."""

    kind: ClassVar[str] = "padding_mask"
    axis: str
    size: int
    inside: float
    outside: float

    def queue_shape(self, rows: int, cols: int) -> tuple[int, int]:
        return (TILE, padded(self.size)) if self.axis == "c" else (padded(self.size), TILE)

    def broadcast(self, rows: int, cols: int) -> tuple[int, int]:
        return (tiles(rows), 1) if self.axis == "c" else (1, tiles(cols))

    def array(self, shape: tuple[int, int]) -> np.ndarray:
        out = np.full(shape, self.outside)
        out[(slice(None), slice(self.size)) if self.axis == "c" else (slice(self.size),)] = self.inside
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "constant": self.kind,
            "axis": self.axis,
            "size": self.size,
            "inside": self.inside,
            "outside": self.outside,
        }

    def text(self) -> str:
        what = "columns" if self.axis == "c" else "rows"
        saturated = "" if math.isfinite(self.outside) else " (saturated to the queue's format)"
        outside = f"{self.outside!r}{saturated}"
        return f"constant mask: {self.inside!r} in the first {self.size} {what}, {outside} past them"

    def label(self) -> str:
        return "mask"


Constant = Fill | ColumnOnes | PaddingMask
CONSTANT_TYPES = (Fill, ColumnOnes, PaddingMask)
_KINDS: dict[str, type[Constant]] = {kind.kind: kind for kind in CONSTANT_TYPES}


def constant_of(description: dict[str, Any]) -> Constant:
    """The constant a ``describe()`` record describes."""
    fields = dict(description)
    kind = _KINDS.get(fields.pop("constant", None))
    if kind is None:
        raise ValueError(f"unknown constant kind {description.get('constant')!r}")
    return kind(**fields)


def largest_finite(df: str | None) -> float:
    """The largest finite magnitude a tensor of data format ``df`` holds (a block format
    has the exponents of its 16-bit floating point, with fewer mantissa bits; inf for no
    format or an integer one).

    >>> largest_finite("Float16"), largest_finite("Bfp8_b") < largest_finite("Float16_b")
    (65504.0, True)
    """
    if df is None:
        return math.inf
    if df in FLOAT_DTYPES:
        dtype = FLOAT_DTYPES[df]
    elif df in BFP_MAGNITUDE_BITS:
        dtype = np.dtype(np.float16 if BFP_MAGNITUDE_BITS[df][1] else ml_dtypes.bfloat16)
    else:  # integers: the evaluator does not round to them
        return math.inf
    start = np.full((1, BLOCK), float(ml_dtypes.finfo(dtype).max))
    return float(quantize(start, df)[0, 0])


def constant_array(description: dict[str, Any], shape: tuple[int, int], df: str | None = None) -> np.ndarray:
    """The contents of a constant queue of ``shape`` from its ``describe()`` record,
    saturated to the finite range of the queue's data format ``df``."""
    bound = largest_finite(df)
    return np.clip(constant_of(description).array(shape), -bound, bound)
