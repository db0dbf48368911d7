"""Constant tensors a netlist needs for ops Buda has no scalar form of.

Buda ops take tensors, not numbers, so ``tensor_scalar(x, c)`` becomes a binary op with a
constant input, and a row sum becomes a matmul with a column of ones (the device reduces
with ``max`` only). Constants live in host queues the runtime fills before a run;
:func:`~nkigym_graph_plugins.buda_backend.host.netlist_inputs` builds their contents from
the descriptions here, which the artifact carries in ``facts["host_queues"]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .shapes import TILE, padded


@dataclass(frozen=True)
class Fill:
    """Every element equal to ``value``: one tile in its queue, broadcast by the reading op."""

    value: float

    def queue_shape(self, rows: int, cols: int) -> tuple[int, int]:
        return (TILE, TILE)

    def broadcast(self, rows: int, cols: int) -> tuple[int, int]:
        """Tile repeats (r, c) that spread the queue over a ``rows x cols`` operand."""
        return (padded(rows) // TILE, padded(cols) // TILE)

    def array(self, shape: tuple[int, int]) -> np.ndarray:
        return np.full(shape, self.value)

    def describe(self) -> dict[str, Any]:
        return {"constant": "fill", "value": self.value}

    def label(self) -> str:
        return "fill"


@dataclass(frozen=True)
class ColumnOnes:
    """``[rows, 1]`` ones (zero in the tile padding): ``x @ ones`` is the row sum of ``x``,
    in tile column 0 like a Buda reduce."""

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
        return {"constant": "column_ones", "rows": self.rows}

    def label(self) -> str:
        return "ones"


Constant = Fill | ColumnOnes


def constant_array(description: dict[str, Any], shape: tuple[int, int]) -> np.ndarray:
    """The contents of a constant queue of ``shape`` from its ``describe()`` record."""
    kind = description.get("constant")
    if kind == "fill":
        return Fill(float(description["value"])).array(shape)
    if kind == "column_ones":
        return ColumnOnes(int(description["rows"])).array(shape)
    raise ValueError(f"unknown constant kind {kind!r}")
