"""Typed, read-only views of the parts of a netlist: queues, graph ops, fused ops, sub-ops.

Each view keeps the raw map (``spec``) and its line, and exposes the fields the checker
and evaluator use with their Buda defaults. Building a view checks field shapes only;
whether the values make sense is the checker's business.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from nkigym_graph.buda.fields import (
    Where,
    get_bool,
    get_count,
    get_format,
    get_format_list,
    get_int,
    get_map,
    get_pair,
    get_str,
    get_str_list,
    require_map,
)
from nkigym_graph.buda.tms import Tm, parse_input_tms, parse_tms
from nkigym_graph.buda.yaml_loader import line_of

TILE = 32
_OPERAND = re.compile(r"^(input|intermed)(\d+)$")


def inner_dims(attributes: Mapping[Any, Any]) -> tuple[int, int] | None:
    """A matmul's or reduce's ``(m_k, u_kt)``, or None when either is missing (the loaders
    have checked that given ones are integers)."""
    m_k, u_kt = attributes.get("m_k"), attributes.get("u_kt")
    return None if m_k is None or u_kt is None else (int(m_k), int(u_kt))


@dataclass(frozen=True)
class Dims:
    """Per-core block shape: ``mblock`` [m, n] ublocks of ``ublock`` [rt, ct] tiles."""

    mblock: tuple[int, int]
    ublock: tuple[int, int]

    @property
    def rows(self) -> int:
        """Tile rows per core (mblock_m * ublock_rt)."""
        return self.mblock[0] * self.ublock[0]

    @property
    def cols(self) -> int:
        """Tile columns per core (mblock_n * ublock_ct)."""
        return self.mblock[1] * self.ublock[1]

    @property
    def ublock_tiles(self) -> int:
        return self.ublock[0] * self.ublock[1]

    def __str__(self) -> str:
        return f"mblock {list(self.mblock)} ublock {list(self.ublock)}"


def operand_kind(name: str) -> tuple[str, int]:
    """Classify a fused-op operand: ``("input", i)``, ``("intermed", k)``, ``("dest", 0)``,
    ``("output", 0)`` or ``("unknown", 0)``."""
    if name in ("dest", "output"):
        return name, 0
    match = _OPERAND.match(name)
    if match:
        return match.group(1), int(match.group(2))
    return "unknown", 0


class LaidOut:
    """A tensor laid out as ``t x grid x mblock x ublock`` tiles (a queue, an op's output)."""

    t: int
    grid_size: tuple[int, int]
    dims: Dims

    @property
    def tiles(self) -> tuple[int, int, int]:
        """Tensor shape ``(t, rows, cols)``, rows and columns in tiles."""
        return (self.t, self.grid_size[0] * self.dims.rows, self.grid_size[1] * self.dims.cols)

    @property
    def shape(self) -> tuple[int, int, int]:
        """Tensor shape ``(t, rows, cols)`` in elements."""
        t, rows, cols = self.tiles
        return (t, rows * TILE, cols * TILE)


@dataclass(frozen=True, eq=False)
class SubOp:
    """One scheduled op inside a fused op."""

    name: str
    type: str
    inputs: tuple[str, ...]
    output: str
    dims: Dims
    attributes: Mapping[Any, Any]
    pop: tuple[str, ...]
    pop_last: tuple[str, ...]
    tms: Mapping[int, tuple[Tm, ...]]
    spec: Mapping[Any, Any] = field(repr=False)
    line: int = 0

    @property
    def m_k(self) -> int | None:
        """``attributes.m_k``; None when missing (no default: the backend has none)."""
        value = self.attributes.get("m_k")
        return None if value is None else int(value)

    @property
    def u_kt(self) -> int | None:
        """``attributes.u_kt``; None when missing."""
        value = self.attributes.get("u_kt")
        return None if value is None else int(value)

    @property
    def inner(self) -> tuple[int, int] | None:
        """``(m_k, u_kt)``, or None when either is missing (rule ``dims.m_k_u_kt``)."""
        return inner_dims(self.attributes)

    @property
    def is_matmul(self) -> bool:
        return self.type == "matmul"

    @property
    def is_reduce(self) -> bool:
        return self.type == "reduce"

    @property
    def reduce_dim(self) -> str | None:
        dim = self.attributes.get("dim")
        return None if dim is None else str(dim)

    @property
    def reduce_type(self) -> str | None:
        kind = self.attributes.get("type")
        return None if kind is None else str(kind)

    def input_tms(self, index: int) -> tuple[Tm, ...]:
        return self.tms.get(index, ())

    @property
    def popped(self) -> tuple[str, ...]:
        """Buffers freed by this sub-op (``pop`` and ``pop_last``)."""
        return self.pop + tuple(p for p in self.pop_last if p not in self.pop)


INTEGER_ATTRIBUTES = ("m_k", "u_kt", "z")
"""Attributes that are integers wherever they appear (a matmul's inner dimension, a
reduce's ``z``)."""


def _attributes(spec: Mapping[Any, Any], where: Where) -> Mapping[Any, Any]:
    """An op's or sub-op's ``attributes``, its ``INTEGER_ATTRIBUTES`` checked."""
    attributes = get_map(spec, "attributes", where)
    for key in INTEGER_ATTRIBUTES:
        if key in attributes:
            get_int(attributes, key, where.inner("attributes"))
    return attributes


def parse_sub_op(entry: Any, where: Where) -> SubOp:
    """A schedule entry: a one-key map ``name: {type, inputs, ..., output}``."""
    entry = require_map(entry, where)
    if len(entry) != 1:
        raise where.error(entry, None, f"a sub-op must be a one-key map, got keys {list(entry)}")
    ((name, spec),) = entry.items()
    here = where.inner(f"sub-op '{name}'")
    spec = require_map(spec, here)
    inputs = get_str_list(spec, "inputs", here)
    attributes = _attributes(spec, here)
    return SubOp(
        name=str(name),
        type=get_str(spec, "type", here),
        inputs=inputs,
        output=get_str(spec, "output", here),
        dims=Dims(get_pair(spec, "mblock", here), get_pair(spec, "ublock", here)),
        attributes=attributes,
        pop=get_str_list(spec, "pop", here, ()),
        pop_last=get_str_list(spec, "pop_last", here, ()),
        tms=parse_input_tms(spec, len(inputs), here),
        spec=spec,
        line=line_of(spec) or line_of(entry),
    )


@dataclass(frozen=True, eq=False)
class FusedOp:
    """A ``fused_ops`` entry: ``inputs``, ``intermediates`` and its ``schedules``."""

    id: str
    inputs: int
    intermediates: int
    schedules: tuple[tuple[SubOp, ...], ...]
    spec: Mapping[Any, Any] = field(repr=False)
    line: int = 0

    def sub_ops(self) -> Iterator[tuple[int, int, SubOp]]:
        """Every sub-op in execution order as ``(schedule index, position, sub-op)``."""
        for s, schedule in enumerate(self.schedules):
            for p, sub_op in enumerate(schedule):
                yield s, p, sub_op

    def sub_op(self, name: str) -> SubOp | None:
        """The first sub-op called ``name``, or None."""
        return next((op for _, _, op in self.sub_ops() if op.name == name), None)


def parse_fused_op(fused_id: Any, spec: Any, where: Where) -> FusedOp:
    here = where.inner(f"fused op {fused_id}")
    spec = require_map(spec, here)
    schedules_raw = spec.get("schedules")
    if not isinstance(schedules_raw, list):
        raise here.error(spec, "schedules", "must be a list of schedules (lists of sub-ops)")
    schedules = []
    for s, schedule in enumerate(schedules_raw):
        if not isinstance(schedule, list):
            raise here.error(schedule, None, f"schedule {s} must be a list of sub-ops")
        schedules.append(tuple(parse_sub_op(entry, here.inner(f"schedule {s}")) for entry in schedule))
    return FusedOp(
        id=str(fused_id),
        inputs=get_int(spec, "inputs", here),
        intermediates=get_int(spec, "intermediates", here, 0),
        schedules=tuple(schedules),
        spec=spec,
        line=line_of(spec),
    )


@dataclass(frozen=True, eq=False)
class Queue(LaidOut):
    """A ``queues`` entry (a DRAM/host queue or ram)."""

    name: str
    input: str
    type: str
    entries: int
    grid_size: tuple[int, int]
    t: int
    dims: Dims
    df: str | None
    loc: str
    target_device: int
    dram: tuple[tuple[int, int], ...]
    tile_dim: tuple[int, int] | None
    input_tms: tuple[Tm, ...]
    spec: Mapping[Any, Any] = field(repr=False)
    line: int = 0

    @property
    def is_host_input(self) -> bool:
        return self.input == "HOST"


def _dram_list(spec: Mapping[Any, Any], where: Where) -> tuple[tuple[int, int], ...]:
    value = spec.get("dram")
    if value is None:
        return ()
    if not isinstance(value, list):
        raise where.error(spec, "dram", "must be a list of [channel, address] pairs")
    pairs = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2 and all(_unsigned(v) for v in item)):
            raise where.error(
                spec, "dram", f"entry {item!r} is not a [channel, address] pair (integers >= 0)"
            )
        pairs.append((int(item[0]), int(item[1])))
    return tuple(pairs)


def _unsigned(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _target_device(spec: Mapping[Any, Any], where: Where) -> int:
    """The device a queue lives on (the first one when a list is given)."""
    value = spec.get("target_device", 0)
    if isinstance(value, list) and value:
        value = value[0]
    return get_int({"target_device": value}, "target_device", where)


def parse_queue(name: Any, spec: Any, where: Where) -> Queue:
    here = where.inner(f"queue '{name}'")
    spec = require_map(spec, here)
    tile_dim = spec.get("tile_dim")
    return Queue(
        name=str(name),
        input=get_str(spec, "input", here),
        type=get_str(spec, "type", here, "queue"),
        entries=get_count(spec, "entries", here, 1),
        grid_size=get_pair(spec, "grid_size", here, [1, 1]),
        t=get_int(spec, "t", here, 1),
        dims=Dims(get_pair(spec, "mblock", here), get_pair(spec, "ublock", here)),
        df=get_format(spec, "df", here, None),
        loc=get_str(spec, "loc", here, "dram"),
        target_device=_target_device(spec, here),
        dram=_dram_list(spec, here),
        tile_dim=None if tile_dim is None else get_pair(spec, "tile_dim", here),
        input_tms=parse_tms(spec.get("input_tms"), here.inner("input_tms")),
        spec=spec,
        line=line_of(spec),
    )


@dataclass(frozen=True, eq=False)
class NetlistOp(LaidOut):
    """A graph op (``type`` matmul, add, fused_op, ...)."""

    name: str
    graph: str
    type: str
    inputs: tuple[str, ...]
    grid_loc: tuple[int, int]
    grid_size: tuple[int, int]
    grid_transpose: bool
    t: int
    dims: Dims
    in_df: tuple[str, ...]
    out_df: str | None
    acc_df: str | None
    intermed_df: str | None
    math_fidelity: str | None
    ublock_order: str
    attributes: Mapping[Any, Any]
    tms: Mapping[int, tuple[Tm, ...]]
    tile_dim: tuple[int, int] | None
    spec: Mapping[Any, Any] = field(repr=False)
    line: int = 0

    @property
    def inner(self) -> tuple[int, int] | None:
        """A matmul's ``(m_k, u_kt)``, or None when either is missing."""
        return inner_dims(self.attributes)

    @property
    def fused_op_id(self) -> str | None:
        value = self.attributes.get("fused_op_id")
        return None if value is None else str(value)

    def input_tms(self, index: int) -> tuple[Tm, ...]:
        return self.tms.get(index, ())

    @property
    def cores(self) -> tuple[int, int]:
        """Rows and columns of worker cores the op occupies (grid_transpose swaps them)."""
        r, c = self.grid_size
        return (c, r) if self.grid_transpose else (r, c)


def parse_op(name: Any, graph: str, spec: Any, where: Where) -> NetlistOp:
    here = where.inner(f"op '{name}'")
    spec = require_map(spec, here)
    inputs = get_str_list(spec, "inputs", here, ())
    tile_dim = spec.get("tile_dim")
    attributes = _attributes(spec, here)
    return NetlistOp(
        name=str(name),
        graph=graph,
        type=get_str(spec, "type", here),
        inputs=inputs,
        grid_loc=get_pair(spec, "grid_loc", here, [0, 0]),
        grid_size=get_pair(spec, "grid_size", here, [1, 1]),
        grid_transpose=get_bool(spec, "grid_transpose", here),
        t=get_int(spec, "t", here, 1),
        dims=Dims(get_pair(spec, "mblock", here), get_pair(spec, "ublock", here)),
        in_df=get_format_list(spec, "in_df", here, ()),
        out_df=get_format(spec, "out_df", here, None),
        acc_df=get_format(spec, "acc_df", here, None),
        intermed_df=get_format(spec, "intermed_df", here, None),
        math_fidelity=get_str(spec, "math_fidelity", here, None),
        ublock_order=get_str(spec, "ublock_order", here, "r"),
        attributes=attributes,
        tms=parse_input_tms(spec, len(inputs), here),
        tile_dim=None if tile_dim is None else get_pair(spec, "tile_dim", here),
        spec=spec,
        line=line_of(spec),
    )
