"""Stitch weights ``[K_i, N_i]`` side by side into one ``[max K, sum N_i]`` tensor, and back.

Several matmuls' weights in one tensor take one circular buffer instead of one each
(a kernel has 32 on Wormhole, 64 on Blackhole); each matmul reads only its own
columns, located by the metadata (see :func:`compile_time_args`).

>>> import numpy as np
>>> stitched, meta = stitch_weights({"a": np.ones((3, 32)), "b": np.ones((5, 64))})
>>> stitched.shape, meta.weights["b"].col_start_tiles, meta.weights["b"].width_tiles
((5, 96), 1, 2)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from nkigym_graph.stitching.errors import StitchError
from nkigym_graph.stitching.metadata import StitchMetadata, WeightSlot
from nkigym_graph.stitching.sharding import (
    Grid,
    check_grid,
    check_memory_layout,
    num_cores,
    shard_shape,
)


@dataclass(frozen=True)
class WeightSpec:
    """One weight to stitch: its name, ``[K, N]`` array and, optionally, its matmul's grid."""

    name: str
    array: npt.ArrayLike
    grid: Grid | None = None


WeightsInput = Mapping[str, npt.ArrayLike] | Sequence[WeightSpec | tuple[Any, ...]]
"""A dict name -> array, or a list of ``(name, array)``, ``(name, array, grid)`` or specs."""


def _specs(weights: WeightsInput) -> list[WeightSpec]:
    if isinstance(weights, Mapping):
        specs = [WeightSpec(name, array) for name, array in weights.items()]
    elif isinstance(weights, Sequence) and not isinstance(weights, str | bytes):
        specs = []
        for index, item in enumerate(weights):
            if isinstance(item, WeightSpec):
                specs.append(item)
            elif isinstance(item, tuple) and len(item) in (2, 3):
                specs.append(WeightSpec(*item))
            else:
                raise StitchError(
                    f"weights[{index}] must be (name, array), (name, array, grid) or a "
                    f"WeightSpec, got {type(item).__name__}"
                )
    else:
        raise StitchError(
            "weights must be a list of (name, array) pairs or a dict name -> array, "
            f"got {type(weights).__name__}"
        )
    if not specs:
        raise StitchError("no weights to stitch: the weight list is empty")
    return specs


def _check_tile(tile: object) -> tuple[int, int]:
    if (
        isinstance(tile, tuple | list)
        and len(tile) == 2
        and all(isinstance(t, int) and not isinstance(t, bool) and t > 0 for t in tile)
    ):
        return (tile[0], tile[1])
    raise StitchError(f"tile must be (height, width) of positive ints, got {tile!r}")


def _check_weight(spec: WeightSpec, tile_w: int, seen: set[str]) -> np.ndarray:
    name = spec.name
    if not isinstance(name, str) or not name:
        raise StitchError(f"weight names must be non-empty strings, got {name!r}")
    if name in seen:
        raise StitchError(f"duplicate weight name {name!r}")
    seen.add(name)
    try:
        array = np.asarray(spec.array)
    except (TypeError, ValueError) as exc:  # e.g. ragged nested lists
        raise StitchError(f"weight {name!r} is not an array: {exc}") from exc
    if array.ndim != 2 or 0 in array.shape:
        raise StitchError(f"weight {name!r} must be a non-empty 2-D [K, N] array, got shape {array.shape}")
    if array.dtype.kind in "OSUMm" or array.dtype.names is not None:
        raise StitchError(f"weight {name!r} has non-numeric dtype {array.dtype}")
    if array.shape[1] % tile_w:
        raise StitchError(
            f"weight {name!r} width {array.shape[1]} is not a multiple of the tile width {tile_w}"
        )
    return array


def _common_dtype(names: list[str], arrays: list[np.ndarray], dtype: npt.DTypeLike | None) -> np.dtype[Any]:
    if dtype is not None:
        try:
            chosen = np.dtype(dtype)
        except TypeError as exc:
            raise StitchError(f"dtype {dtype!r} is not a numpy dtype") from exc
        if chosen.kind in "OSUMmV":
            raise StitchError(f"dtype {dtype!r} is not a numeric dtype")
        return chosen
    for name, array in zip(names[1:], arrays[1:], strict=True):
        if array.dtype != arrays[0].dtype:
            raise StitchError(
                f"weights {names[0]!r} ({arrays[0].dtype}) and {name!r} ({array.dtype}) have "
                "different dtypes; pass dtype= to cast all weights to one"
            )
    return arrays[0].dtype


def _weight_grid(spec: WeightSpec, union: Grid | None) -> Grid | None:
    if spec.grid is None:
        return None
    grid = check_grid(spec.grid, f"grid of {spec.name!r}")
    if union is not None and num_cores(grid) > num_cores(union):
        raise StitchError(
            f"grid of {spec.name!r} has {num_cores(grid)} cores, more than the "
            f"{num_cores(union)} of the stitched tensor's grid {union}"
        )
    return grid


def stitch_weights(
    weights: WeightsInput,
    tile: tuple[int, int] = (1, 32),
    grid: Grid | None = None,
    memory_layout: str = "width_sharded",
    dtype: npt.DTypeLike | None = None,
) -> tuple[np.ndarray, StitchMetadata]:
    """Concatenate ``weights`` along width, in the order given, into one tensor.

    The stitched height is the largest ``K`` rounded up to the tile height; shorter
    weights get zero rows at the bottom. Every width must be a multiple of the tile
    width. ``grid`` is the union core grid the stitched tensor is sharded over with
    ``memory_layout`` (``width_sharded``, ``height_sharded`` or ``block_sharded``);
    without it ``metadata.shard_shape`` is None. A per-weight grid (given as a triple
    or a :class:`WeightSpec`) is recorded in its slot and may not have more cores
    than ``grid``.

    All weights must share one dtype. ``dtype=`` instead casts every weight with
    numpy's ``astype`` (round to nearest between float types, e.g. float32 to
    ml_dtypes' bfloat16; truncation from float to int); :func:`unstitch` then returns
    the cast weights.

    Raises :class:`StitchError` naming the weight for an empty list, a width that is
    not a tile multiple, mixed dtypes, a non-2-D array, a duplicate name, or a bad
    tile, grid or memory layout.
    """
    tile_shape = _check_tile(tile)
    tile_h, tile_w = tile_shape
    layout = check_memory_layout(memory_layout)
    union = None if grid is None else check_grid(grid)
    specs = _specs(weights)
    seen: set[str] = set()
    arrays = [_check_weight(spec, tile_w, seen) for spec in specs]
    names = [spec.name for spec in specs]
    out_dtype = _common_dtype(names, arrays, dtype)
    grids = [_weight_grid(spec, union) for spec in specs]
    height = -(-max(a.shape[0] for a in arrays) // tile_h) * tile_h
    width = sum(a.shape[1] for a in arrays)
    shard = None if union is None else shard_shape((height, width), tile_shape, layout, union)

    stitched = np.zeros((height, width), dtype=out_dtype)
    slots: dict[str, WeightSlot] = {}
    col = 0
    for name, array, weight_grid in zip(names, arrays, grids, strict=True):
        k, n = (int(d) for d in array.shape)
        stitched[:k, col : col + n] = array.astype(out_dtype, copy=False)
        slots[name] = WeightSlot(
            name=name,
            col_start=col,
            col_end=col + n,
            col_start_tiles=col // tile_w,
            width_tiles=n // tile_w,
            original_shape=(k, n),
            padded_shape=(height, n),
            grid=weight_grid,
        )
        col += n

    metadata = StitchMetadata(
        weights=slots,
        unified_shape=(height, width),
        total_width_tiles=width // tile_w,
        total_height_tiles=height // tile_h,
        tile=tile_shape,
        memory_layout=layout,
        grid=union,
        shard_shape=shard,
        dtype=out_dtype.name,
    )
    return stitched, metadata


def unstitch(array: npt.ArrayLike, metadata: StitchMetadata) -> dict[str, np.ndarray]:
    """Cut a stitched tensor back into its weights (copies, padding rows dropped), in order.

    Raises :class:`StitchError` if ``array``'s shape is not ``metadata.unified_shape``.
    """
    if not isinstance(metadata, StitchMetadata):
        raise StitchError(f"metadata must be a StitchMetadata, got {type(metadata).__name__}")
    stitched = np.asarray(array)
    if stitched.shape != metadata.unified_shape:
        raise StitchError(
            f"stitched array has shape {stitched.shape}, the metadata's unified_shape is "
            f"{metadata.unified_shape}"
        )
    return {
        name: stitched[: slot.original_shape[0], slot.col_start : slot.col_end].copy()
        for name, slot in metadata.weights.items()
    }
