"""Stitching a program's weights: the rewritten program, its layout, and its inputs.

:func:`stitch_program` replaces weights ``w_i [K_i, N_i]`` by one parameter
``[max K_i rounded up to the tile height, sum N_i]`` named by
:mod:`~nkigym_graph.stitching.naming`; every load of ``w_i`` becomes a load of the same
rows at column offset ``N_1 + ... + N_{i-1}`` (the padding rows are never read).
:func:`stitching_of` reads the layout back from any program as
:class:`StitchMetadata`, and :func:`stitch_inputs` builds the stitched input arrays
with :func:`stitch_weights`, so that::

    interpret(stitched, **stitch_inputs(stitched, inputs)) == interpret(original, **inputs)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from nkigym_graph.ir.arguments import require_program, require_type
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.ir.variables import Param
from nkigym_graph.stitching.errors import StitchError
from nkigym_graph.stitching.metadata import StitchMetadata, WeightSlot
from nkigym_graph.stitching.naming import (
    WeightLayout,
    padded_height,
    parse_stitched_name,
    stitch_tile,
    stitched_name,
)
from nkigym_graph.stitching.stitch import stitch_weights
from nkigym_graph.stitching.weight_params import WeightParam, find_weights


def layout_metadata(layout: WeightLayout, tile: tuple[int, int], dtype: str) -> StitchMetadata:
    """The metadata of weights ``layout`` stitched side by side with ``tile`` (no core grid)."""
    tile_h, tile_w = tile
    height = padded_height(max(k for _, (k, _) in layout), tile_h)
    slots: dict[str, WeightSlot] = {}
    col = 0
    for name, (k, n) in layout:
        if n % tile_w:
            raise StitchError(f"weight {name!r} width {n} is not a multiple of the tile width {tile_w}")
        slots[name] = WeightSlot(name, col, col + n, col // tile_w, n // tile_w, (k, n), (height, n))
        col += n
    return StitchMetadata(
        weights=slots,
        unified_shape=(height, col),
        total_width_tiles=col // tile_w,
        total_height_tiles=height // tile_h,
        tile=tile,
        memory_layout="width_sharded",
        grid=None,
        shard_shape=None,
        dtype=dtype,
    )


def stitching_of(program: Program) -> Mapping[str, StitchMetadata]:
    """Stitched parameter name -> the layout of its weights, for every stitched parameter.

    Raises :class:`StitchError` for a parameter named like a stitched tensor whose shape
    does not match the layout its name gives.
    """
    require_program(program, "program", StitchError)
    found: dict[str, StitchMetadata] = {}
    tile = stitch_tile(program.target)
    for param in program.params:
        layout = parse_stitched_name(param.name)
        if layout is None:
            continue
        metadata = layout_metadata(layout, tile, param.dtype)
        if tuple(param.shape) != metadata.unified_shape:
            raise StitchError(
                f"parameter {param.name!r} has shape {tuple(param.shape)}, but its weights stitched "
                f"with the {tile} tile of {program.target.name} give {metadata.unified_shape}"
            )
        found[param.name] = metadata
    return MappingProxyType(found)


def stitched_loads(
    program: Program, group: Sequence[WeightParam], metadata: StitchMetadata, name: str
) -> dict[int, Statement]:
    """Node -> its replacement, for every load of a ``group`` weight: the same rows of ``name``,
    columns shifted to the weight's slot."""
    replaced: dict[int, Statement] = {}
    for weight in group:
        offset = metadata.weights[weight.name].col_start
        for node in weight.loads:
            stmt = program[node]
            (rows, (start, stop)), dst = stmt.operands[0].slices, stmt.operands[1]
            source = Operand(name, (rows, (start + offset, stop + offset)))
            replaced[node] = stmt._replace(operands=(source, dst))
    return replaced


def plan(program: Program, weights: Sequence[str]) -> tuple[tuple[WeightParam, ...], StitchMetadata, str]:
    """The weights named (in parameter order), their stitched layout and the new parameter's name.

    Raises :class:`StitchError` unless ``weights`` are two or more weights of one
    stitchable group of :func:`find_weights`.
    """
    analysis = find_weights(program)
    names = require_type(weights, (list, tuple), "weights", StitchError, "a list of parameter names")
    for name in names:
        require_type(name, str, "weights", StitchError, "a list of parameter names")
    wanted = set(weights)
    for name in weights:
        if name in analysis.rejected:
            raise StitchError(f"cannot stitch parameter {name!r}: {analysis.rejected[name]}")
    group = next((g for g in analysis.groups if wanted <= {w.name for w in g}), None)
    if group is None:
        known = {w.name for g in analysis.groups for w in g} | set(analysis.rejected)
        unknown = sorted(wanted - known)
        if unknown:
            raise StitchError(f"cannot stitch {unknown}: no such parameter of {program.name}")
        raise StitchError(f"cannot stitch {sorted(wanted)}: they have different dtypes")
    chosen = tuple(w for w in group if w.name in wanted)
    if len(chosen) < 2:
        raise StitchError(f"stitching needs two or more weights, got {sorted(wanted)}")
    layout = tuple((w.name, w.shape) for w in chosen)
    metadata = layout_metadata(layout, analysis.tile, chosen[0].dtype)
    name = stitched_name(layout)
    if name in program.variables:
        raise StitchError(f"cannot stitch {sorted(wanted)}: {program.name} already has a {name!r}")
    return chosen, metadata, name


def stitch_program(program: Program, weights: Sequence[str]) -> Program:
    """``program`` with ``weights`` replaced by one stitched parameter (see the module docstring)."""
    group, metadata, name = plan(program, weights)
    replaced = stitched_loads(program, group, metadata, name)
    dropped = {w.name for w in group}
    params: list[Param] = []
    for param in program.params:
        if param.name == group[0].name:
            params.append(Param(name, metadata.unified_shape, param.dtype, param.space))
        elif param.name not in dropped:
            params.append(param)
    statements = [replaced.get(node, stmt) for node, stmt in program.items()]
    return program.replace(params=params, statements=statements)


def stitch_inputs(program: Program, inputs: Mapping[str, npt.ArrayLike]) -> dict[str, Any]:
    """The inputs of a stitched ``program`` from the original per-weight ``inputs``.

    Every stitched parameter's array is built by :func:`stitch_weights` from the
    weights its name lists (cast to the parameter's dtype); its weights are dropped
    from the result, other inputs pass through. An input that already has the stitched
    parameter's name is kept as given.
    """
    require_type(inputs, Mapping, "inputs", StitchError, "a map of parameter name to array")
    result: dict[str, Any] = dict(inputs)
    for name, metadata in stitching_of(program).items():
        if name in inputs:
            continue
        missing = [w for w in metadata.weights if w not in inputs]
        if missing:
            raise StitchError(f"stitched parameter {name!r} needs the input(s) {missing}")
        arrays = [(w, np.asarray(inputs[w])) for w in metadata.weights]
        stitched, built = stitch_weights(arrays, tile=metadata.tile, dtype=metadata.dtype)
        if dict(built.weights) != dict(metadata.weights):
            shapes = {w: array.shape for w, array in arrays}
            raise StitchError(f"inputs {shapes} do not have the shapes {name!r} was stitched from")
        for w in metadata.weights:
            del result[w]
        result[name] = stitched
    return result
