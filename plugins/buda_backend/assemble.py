"""The netlist document: devices, queues, one graph, a standard program, fused ops.

The program is the usual single-graph runner: loop variables, one ``execute`` of the
graph per loop iteration with the host queues' pointer settings, and the pointer
increments (``incwrap`` at twice the queue entries).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nkigym_graph.ir.variables import fresh_name

from .arch import Arch
from .names import Names
from .nodes import ConstSource, NodeGraph, NodeSource, ParamSource
from .opbuild import BuiltOp
from .queues import DramAllocator, describe_source, host_queue, queue_spec, source_df, source_queue_shape

Pair = tuple[int, int]


@dataclass
class Assembled:
    """The document plus what the host needs to fill and read its queues."""

    doc: dict[str, Any]
    host_queues: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)


def _op_entry(op: BuiltOp, location: Pair, fused_id: int | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": op.spec["type"], "grid_loc": list(location)}
    entry.update((k, v) for k, v in op.spec.items() if k != "type")
    if fused_id is not None:
        entry["attributes"] = {"fused_op_id": fused_id}
    return entry


def _program(graph_name: str, host_queues: list[str]) -> list[dict[str, Any]]:
    settings = {
        name: {
            "prologue": False,
            "epilogue": False,
            "zero": False,
            "rd_ptr_global": "$gptr",
            "rd_ptr_local": "$lptr",
        }
        for name in host_queues
    }
    body: list[Any] = [
        {"var": {"$c_loop_count": 1, "$c_one": 1, "$c_wrap": 2}},
        {"staticvar": {"$gptr": 0, "$lptr": 0}},
        {"loop": "$c_loop_count"},
        {"execute": {"graph_name": graph_name, "queue_settings": settings}},
        {"varinst": ["$gptr", "incwrap", "$c_one", "$c_wrap"]},
        {"varinst": ["$lptr", "incwrap", "$c_one", "$c_wrap"]},
        "endloop",
    ]
    return [{f"run_{graph_name}": body}]


def assemble(
    graph_name: str,
    ops: list[BuiltOp],
    locations: dict[str, Pair],
    graph: NodeGraph,
    names: Names,
    arch: Arch,
    alone: bool = False,
) -> Assembled:
    """The netlist of ``ops`` placed at ``locations``. ``alone``: a one-op netlist for
    checking that op by itself (what other ops would produce comes from host queues)."""
    out = Assembled({"devices": {"arch": arch.name}})
    dram = DramAllocator(arch.dram_channels)
    queues: dict[str, dict[str, Any]] = {}
    made = {op.name for op in ops}
    for op in ops:
        for source in op.sources:
            name = names.source(source)
            if name in queues or name in made:
                continue
            if isinstance(source, ParamSource | ConstSource):
                out.host_queues[name] = describe_source(source)
            elif not (alone and isinstance(source, NodeSource)):
                continue
            queues[name] = host_queue(source_queue_shape(source), arch, dram, source_df(source, arch))
    op_map = {op.name: op for op in ops}
    if alone:
        targets = {fresh_name(f"{op.name}_out", queues.keys() | made): op.name for op in ops}
    else:
        targets = {names.outputs[o]: names.nodes[node] for o, node in graph.outputs.items()}
    for queue_name, producer in targets.items():
        op = op_map[producer]
        queues[queue_name] = queue_spec(
            producer,
            op.grid,
            (tuple(op.spec["mblock"]), tuple(op.spec["ublock"])),
            arch,
            dram,
            op.spec["out_df"],
        )
    if not alone:
        for output, node in graph.outputs.items():
            shape = graph.nodes[node].shape
            out.outputs[output] = {"queue": names.outputs[output], "shape": list(shape)}
    fused: dict[int, dict[str, Any]] = {}
    ops_doc: dict[str, Any] = {}
    for op in ops:
        fused_id = None
        if op.fused is not None:
            fused_id = len(fused)
            fused[fused_id] = op.fused
        ops_doc[op.name] = _op_entry(op, locations[op.name], fused_id)
    out.doc["queues"] = queues
    out.doc["graphs"] = {graph_name: ops_doc}
    out.doc["programs"] = _program(graph_name, [n for n, q in queues.items() if q["input"] == "HOST"])
    if fused:
        out.doc["fused_ops"] = fused
    return out
