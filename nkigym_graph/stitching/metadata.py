"""Where each weight sits in a stitched tensor: per-weight slots and the global layout.

The metadata checks itself at construction: the slots tile the stitched width from
column 0 with no gap or overlap, every slot is whole tiles wide and as tall as the
stitched tensor, and each original weight fits in its slot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from nkigym_graph.stitching.errors import StitchError
from nkigym_graph.stitching.sharding import Grid


@dataclass(frozen=True)
class WeightSlot:
    """One weight's columns ``[col_start, col_end)`` of the stitched tensor."""

    name: str
    col_start: int
    col_end: int
    col_start_tiles: int
    width_tiles: int
    original_shape: tuple[int, int]
    """``(K, N)`` as given."""
    padded_shape: tuple[int, int]
    """``(stitched height, N)``: the weight with zero rows added at the bottom."""
    grid: Grid | None = None
    """The cores that run this weight's matmul, if given."""

    def to_dict(self) -> dict[str, Any]:
        """The seed's per-weight dict (without the name, which is its key)."""
        return {
            "col_start": self.col_start,
            "col_end": self.col_end,
            "col_start_tiles": self.col_start_tiles,
            "width_tiles": self.width_tiles,
            "original_shape": self.original_shape,
            "padded_shape": self.padded_shape,
            "grid": self.grid,
        }


@dataclass(frozen=True)
class StitchMetadata:
    """The layout of a stitched tensor; ``weights`` is keyed by name in stitching order."""

    weights: Mapping[str, WeightSlot]
    unified_shape: tuple[int, int]
    total_width_tiles: int
    total_height_tiles: int
    tile: tuple[int, int]
    memory_layout: str
    grid: Grid | None
    """The union grid the stitched tensor is sharded over, if given."""
    shard_shape: tuple[int, int] | None
    """Per-core shard (see :mod:`nkigym_graph.stitching.sharding`); None without a grid."""
    dtype: str
    """numpy name of the stitched tensor's dtype (e.g. ``float32``, ``bfloat16``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        self._check()

    def __hash__(self) -> int:
        return hash((tuple(self.weights.values()), self.unified_shape, self.tile, self.dtype))

    def _check(self) -> None:
        if not self.weights:
            raise StitchError("metadata has no weights")
        height, width = self.unified_shape
        tile_h, tile_w = self.tile
        if (height, width) != (self.total_height_tiles * tile_h, self.total_width_tiles * tile_w):
            raise StitchError(
                f"unified_shape {self.unified_shape} is not {self.total_height_tiles} x "
                f"{self.total_width_tiles} tiles of {self.tile}"
            )
        col = 0
        for name, slot in self.weights.items():
            k, n = slot.original_shape
            if (
                name != slot.name
                or slot.col_start != col
                or slot.col_start_tiles * tile_w != col
                or slot.col_end - slot.col_start != n
                or slot.width_tiles * tile_w != n
                or n <= 0
                or slot.padded_shape != (height, n)
                or not 0 < k <= height
            ):
                raise StitchError(f"weight slot {slot!r} does not fit at column {col}")
            col = slot.col_end
        if col != width:
            raise StitchError(f"weight slots cover {col} columns, unified width is {width}")

    def to_dict(self) -> dict[str, Any]:
        """The seed's metadata dict: global fields, then ``weights`` keyed by name."""
        return {
            "unified_shape": self.unified_shape,
            "total_width_tiles": self.total_width_tiles,
            "total_height_tiles": self.total_height_tiles,
            "tile": self.tile,
            "memory_layout": self.memory_layout,
            "grid": self.grid,
            "shard_shape": self.shard_shape,
            "dtype": self.dtype,
            "weights": {name: slot.to_dict() for name, slot in self.weights.items()},
        }
