"""Bounds a netlist is held to before any work, so a hostile or mistaken netlist is
refused quickly with a :class:`NetlistError` instead of holding the machine for minutes.

Loading (and so checking) enforces:

- ``text_chars``: characters of YAML text (the YAML reader handles ~100k a second);
- ``yaml_nodes``: YAML nodes with every alias expanded (a "billion laughs" document of
  nested aliases stops here before it is built);
- ``grid``: each ``grid_size`` dimension, at most the largest Tenstorrent worker grid
  (whether an op fits its architecture's grid is the ``graph.grid`` rule);
- ``t``, ``block``: the ``t`` dimension, each ``mblock`` / ``ublock`` dimension and a
  matmul's or reduce's ``m_k`` / ``u_kt`` (graph ops and fused sub-ops); every size is at
  least 1.

Evaluation, which holds every tensor in memory, also enforces before any array is made:

- ``tensor_tiles``: tiles of one queue or op tensor (``t x grid x mblock x ublock``), also
  after an input's ``broadcast`` TMs;
- ``total_tiles``: tiles of every queue and op tensor together.

Pass ``NetlistLimits(...)`` as ``limits=`` to ``load_netlist``, ``check_netlist`` or
``evaluate_netlist`` to change them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from nkigym_graph.buda.arch import ARCH_TARGETS
from nkigym_graph.buda.errors import NetlistError
from nkigym_graph.buda.fields import Where
from nkigym_graph.buda.model import Dims, NetlistOp, Queue
from nkigym_graph.buda.tms import Tm
from nkigym_graph.ir.arguments import require_int

if TYPE_CHECKING:
    from nkigym_graph.buda.netlist import Netlist

LARGEST_GRID = max(max(target.facts["grid"]) for target in ARCH_TARGETS.values())


@dataclass(frozen=True)
class NetlistLimits:
    """The bounds of the module docstring."""

    text_chars: int = 4_000_000
    yaml_nodes: int = 1_000_000
    grid: int = LARGEST_GRID
    t: int = 4096
    block: int = 1024
    tensor_tiles: int = 1 << 16
    total_tiles: int = 1 << 18

    def __post_init__(self) -> None:
        for item in fields(self):
            require_int(getattr(self, item.name), f"NetlistLimits {item.name}", NetlistError, minimum=1)


DEFAULT_LIMITS = NetlistLimits()


def check_limits(netlist: Netlist, limits: NetlistLimits) -> None:
    """Raise :class:`NetlistError` for the first size of ``netlist`` outside ``limits``."""
    where = Where("netlist", netlist.source)
    for queue in netlist.queues.values():
        _sizes(queue, where.inner(f"queue '{queue.name}'"), limits)
    for op in netlist.all_ops():
        here = where.inner(f"graph '{op.graph}', op '{op.name}'")
        _sizes(op, here, limits)
        _inner(op.attributes, op.spec, here, limits)
    for fused in netlist.fused_ops.values():
        for s, _, sub in fused.sub_ops():
            here = where.inner(f"fused op {fused.id}, schedule {s}, sub-op '{sub.name}'")
            _dims(sub.dims, sub.spec, here, limits)
            _inner(sub.attributes, sub.spec, here, limits)


def check_evaluation_limits(netlist: Netlist, limits: NetlistLimits) -> None:
    """Raise :class:`NetlistError` if evaluating ``netlist`` would hold more tiles than
    ``limits`` allow (one tensor, one broadcast input, or all tensors together)."""
    where = Where("netlist", netlist.source)
    items: list[tuple[Queue | NetlistOp, Where]] = [
        (q, where.inner(f"queue '{q.name}'")) for q in netlist.queues.values()
    ]
    items += [(op, where.inner(f"graph '{op.graph}', op '{op.name}'")) for op in netlist.all_ops()]
    for item, here in items:
        if tiles(item) > limits.tensor_tiles:
            raise here.error(item.spec, None, _too_many(tiles(item), "t x grid x mblock x ublock", limits))
        inputs = [(item.input, item.input_tms, "input_tms")] if isinstance(item, Queue) else []
        if isinstance(item, NetlistOp):
            inputs = [(name, item.input_tms(i), f"input_{i}_tms") for i, name in enumerate(item.inputs)]
        for source, tms, key in inputs:
            producer = netlist.producer(source)
            size = (tiles(producer) if producer is not None else 1) * _broadcasts(tms)
            if size > limits.tensor_tiles:
                raise here.error(item.spec, key, _too_many(size, f"'{source}' after its broadcasts", limits))
    for fused in netlist.fused_ops.values():
        for s, _, sub in fused.sub_ops():
            for index, tms in sub.tms.items():
                if _broadcasts(tms) > limits.tensor_tiles:
                    here = where.inner(f"fused op {fused.id}, schedule {s}, sub-op '{sub.name}'")
                    message = _too_many(_broadcasts(tms), "broadcast factors", limits)
                    raise here.error(sub.spec, f"input_{index}_tms", message)
    total = sum(tiles(item) for item, _ in items)
    if total > limits.total_tiles:
        raise where.error(
            netlist.data,
            None,
            f"its tensors hold {total} tiles, more than NetlistLimits.total_tiles = {limits.total_tiles}",
        )


def _sizes(item: Queue | NetlistOp, where: Where, limits: NetlistLimits) -> None:
    _within(item.t, limits.t, "t", item.spec, "t", where)
    for size in item.grid_size:
        _within(size, limits.grid, "grid", item.spec, "grid_size", where)
    _dims(item.dims, item.spec, where, limits)


def _dims(dims: Dims, spec: Mapping[Any, Any], where: Where, limits: NetlistLimits) -> None:
    for key, pair in (("mblock", dims.mblock), ("ublock", dims.ublock)):
        for size in pair:
            _within(size, limits.block, "block", spec, key, where)


def _inner(
    attributes: Mapping[Any, Any], spec: Mapping[Any, Any], where: Where, limits: NetlistLimits
) -> None:
    """A matmul's or reduce's ``m_k`` and ``u_kt``, when given, are sizes like a block's."""
    for key in ("m_k", "u_kt"):
        if key in attributes:
            _within(attributes[key], limits.block, "block", spec, "attributes", where)


def _broadcasts(tms: Iterable[Tm]) -> int:
    return math.prod(tm.factor or 1 for tm in tms if tm.name == "broadcast")


def tiles(item: Queue | NetlistOp) -> int:
    """Tiles of a queue's or op's tensor: ``t x grid x mblock x ublock``."""
    return item.t * item.grid_size[0] * item.grid_size[1] * item.dims.rows * item.dims.cols


def _within(value: Any, limit: int, name: str, spec: Mapping[Any, Any], key: str, where: Where) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise where.error(spec, key, f"{value!r} is outside 1..{limit} (NetlistLimits.{name})")


def _too_many(count: int, what: str, limits: NetlistLimits) -> str:
    return f"{count} tiles ({what}) is more than NetlistLimits.tensor_tiles = {limits.tensor_tiles}"
