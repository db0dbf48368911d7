"""One graph op from a group of nodes: a plain Buda op, or a ``fused_op`` with its schedules.

Block structure:

- grid: the most cores per axis that divide every tensor of the op (a 64x96 matmul runs
  on [2, 3], however the program is tiled), capped by the worker grid and placement. A
  fused op with a matmul uses one core column (seed 004 rule 8, the stricter reading);
  with more matmuls than NOCs (rule 9), or a matmul reading input 1 from an intermediate
  (each core would hold only its own rows of it), it runs on one core;
- mblock / ublock per core from :class:`~.blocking.Blocking`: ublocks fit dest and the
  program's tile of the result (a program tiled 32x32 computes one-tile ublocks; merged
  tiles give larger ones, which reuse unpacked operands: what search on Tenstorrent
  targets improves);
- matmul ``m_k`` / ``u_kt`` split the inner dim as the intermediate feeding it is blocked
  (seed 004 rule 25), else into the widest ublock that fits dest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .arch import Arch
from .blocking import Blocking, grid_for
from .fused import Dims, build_schedules, input_tms
from .group import GroupMicros, Sub, collect
from .names import Names
from .nodes import NodeGraph, Source
from .queues import source_df
from .shapes import largest_divisor, tile_shape, tiles

Pair = tuple[int, int]


@dataclass
class BuiltOp:
    """A graph op ready to be placed: its spec without ``grid_loc``."""

    name: str
    exit: int
    members: tuple[int, ...]
    grid: Pair
    spec: dict[str, Any]
    sources: list[Source]
    fused: dict[str, Any] | None
    sub_ops: int

    @property
    def cores(self) -> int:
        return self.grid[0] * self.grid[1]


def _grid(group: GroupMicros, arch: Arch, limit: Pair) -> Pair:
    subs = [group.subs[i] for i in group.order]
    worker = arch.worker_grid
    cap = (min(worker[0], limit[0]), min(worker[1], limit[1]))
    plain = len(subs) == 1
    matmuls = [s for s in subs if s.type == "matmul"]
    if not plain and (len(matmuls) > arch.nocs or any(isinstance(s.inputs[1], int) for s in matmuls)):
        return (1, 1)
    shapes = [group.subs[group.exit].tiles] if plain else [s.tiles for s in subs]
    return grid_for(shapes, cap, cap, split_columns=plain or not matmuls)


def _bound(graph: NodeGraph, exit_node: int) -> Pair | None:
    """The program's tile of the result, in tiles: the largest ublock (None: no tile)."""
    tile = graph.nodes[exit_node].tile
    return (tiles(tile[0]), tiles(tile[1])) if tile[0] and tile[1] else None


def _operand_tiles(group: GroupMicros, operand: int | Source) -> Pair:
    if isinstance(operand, int):
        return group.subs[operand].tiles
    return tile_shape(operand.shape)


def _inner(group: GroupMicros, sub: Sub, blocking: Blocking, dest: int) -> dict[str, int]:
    """``m_k`` / ``u_kt`` of a matmul or reduce."""
    first = sub.inputs[0]
    if isinstance(first, int):
        (_, n), (_, c) = blocking.dims(group.subs[first].tiles)
        return {"m_k": n, "u_kt": c}
    if sub.type == "matmul" and isinstance(sub.inputs[1], int):
        (m, _), (r, _) = blocking.dims(group.subs[sub.inputs[1]].tiles)
        return {"m_k": m, "u_kt": r}
    inner = _operand_tiles(group, first)[1]
    u_kt = largest_divisor(inner, dest)
    return {"m_k": inner // u_kt, "u_kt": u_kt}


def _finish_exit(group: GroupMicros) -> None:
    """A fused matmul/reduce with m_k > 1 cannot write the output: copy it out (rule 18)."""
    last = group.subs[group.exit]
    if len(group.order) > 1 and last.contracts and last.attributes.get("m_k", 1) != 1:
        group.subs.append(Sub("datacopy", [group.exit], {}, last.shape, last.label))
        group.exit = len(group.subs) - 1
        group.order.append(group.exit)


def _op_spec(
    arch: Arch,
    kind: str,
    grid: Pair,
    dims: Dims,
    sources: list[Source],
    names: Names,
    shape: Pair,
    reduces: bool = False,
) -> dict[str, Any]:
    """The op's netlist entry, reading ``sources`` and writing a tensor of ``shape``
    (``reduces``: the op, or a sub-op of it, is a reduce)."""
    in_df = [source_df(s, arch) for s in sources]
    spec: dict[str, Any] = {
        "type": kind,
        "grid_size": list(grid),
        "inputs": [names.source(s) for s in sources],
        "t": 1,
        "mblock": list(dims[0]),
        "ublock": list(dims[1]),
        "buf_size_mb": 2,
        "ublock_order": "r",
        "in_df": in_df,
        "out_df": arch.stored_df(shape),
        "intermed_df": arch.intermed_df,
        "acc_df": arch.op_acc_df(in_df, reduces),
        "math_fidelity": arch.math_fidelity,
        "untilize_output": False,
    }
    for index, items in enumerate(input_tms(s) for s in sources):
        if items:
            spec[f"input_{index}_tms"] = items
    return spec


def build_op(
    graph: NodeGraph, members: list[int], exit_node: int, arch: Arch, names: Names, limit: Pair
) -> BuiltOp:
    """The graph op (and fused op) computing ``members`` with result ``exit_node``."""
    group = collect(graph, members, exit_node)
    grid = _grid(group, arch, limit)
    shapes = [group.subs[i].tiles for i in group.order]
    blocking = Blocking(grid, shapes, arch.dest_tiles, _bound(graph, exit_node))
    for i in group.order:
        sub = group.subs[i]
        if sub.contracts:
            sub.attributes.update(_inner(group, sub, blocking, arch.dest_tiles))
    _finish_exit(group)
    dims = {i: blocking.dims(group.subs[i].tiles) for i in group.order}
    out_dims = dims[group.exit]
    name = names.nodes[exit_node]
    if len(group.order) == 1:
        sub = group.subs[group.exit]
        sources = [o for o in sub.inputs if not isinstance(o, int)]
        spec = _op_spec(arch, sub.type, grid, out_dims, sources, names, sub.shape, sub.type == "reduce")
        if sub.attributes:
            spec["attributes"] = dict(sub.attributes)
        return BuiltOp(name, exit_node, tuple(members), grid, spec, sources, None, 1)
    fused = build_schedules(group, dims, grayskull=arch.name == "grayskull")
    sources = fused.sources
    reduces = any(group.subs[i].type == "reduce" for i in group.order)
    shape = group.subs[group.exit].shape
    spec = _op_spec(arch, "fused_op", grid, out_dims, sources, names, shape, reduces)
    spec["attributes"] = {"fused_op_id": None}
    return BuiltOp(name, exit_node, tuple(members), grid, spec, sources, fused.spec, fused.sub_ops)
