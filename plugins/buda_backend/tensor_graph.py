"""The tensor-level dataflow of a tiled program: one value per logical operation.

A tiled program computes each logical tensor in tiles (and matmul / reduce results in
partial sums over chunks of the contracted axis). The Buda backend needs the graph the
user wrote: one node per ``nc_matmul``, ``activation``, ... over whole tensors.
:mod:`.lift` recovers it; this module holds the result.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from nkigym_graph.ir.ops.base import Op
from nkigym_graph.ir.slices import Range
from nkigym_graph.ir.statement import Attrs


@dataclass(frozen=True)
class WeightView:
    """One weight of a stitched parameter: its columns, as the parameter's name lays them out."""

    param: str
    """The stitched parameter."""
    weight: str
    """The weight's own name."""
    columns: Range
    """Its columns ``[start, stop)`` in the stitched parameter."""


@dataclass(frozen=True)
class TensorValue:
    """One whole tensor: a parameter (``op`` is None) or the result of one logical op."""

    id: int
    name: str
    """The parameter's name, or ``<op>_<id>`` for a computed value."""
    shape: tuple[int, int]
    op: Op | None = None
    attrs: Attrs = ()
    inputs: tuple[int, ...] = ()
    """Value ids of the op's operands, in read order."""
    tile: tuple[int, int] = (0, 0)
    """The tile shape the program computes it in (most common); (0, 0) for parameters."""
    statement: str = ""
    """The first program statement computing a tile of it (for error messages)."""
    view: WeightView | None = None
    """For a parameter value: the weight of a stitched parameter it is (None for a whole parameter)."""

    @property
    def is_param(self) -> bool:
        return self.op is None

    @property
    def attr_map(self) -> Mapping[str, Any]:
        return dict(self.attrs)


@dataclass(frozen=True)
class TensorGraph:
    """Values in topological order (inputs before their consumers) and the program outputs."""

    values: tuple[TensorValue, ...]
    outputs: Mapping[str, int]
    """Program output name -> the value stored into it."""
    consumers: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    """Value id -> ids of the values that read it (each once)."""

    def __getitem__(self, value_id: int) -> TensorValue:
        return self.values[value_id]

    def computed(self) -> Iterator[TensorValue]:
        """The non-parameter values, in topological order."""
        return (v for v in self.values if not v.is_param)


def with_consumers(values: tuple[TensorValue, ...], outputs: Mapping[str, int]) -> TensorGraph:
    """A graph with its consumer index filled in."""
    readers: dict[int, list[int]] = {v.id: [] for v in values}
    for value in values:
        for source in dict.fromkeys(value.inputs):
            readers[source].append(value.id)
    return TensorGraph(values, dict(outputs), {k: tuple(v) for k, v in readers.items()})
