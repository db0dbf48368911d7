"""The circular buffers of a Buda netlist: one kernel per graph op.

The counting rule, per graph op:

- **inputs**: one CB per distinct name in its ``inputs``;
- **intermediates**: a fused op's declared ``intermediates`` (``intermed0`` ...); a plain
  ``matmul`` whose inner dimension spans several blocks (``m_k > 1``) keeps its partial
  sums in one intermediate buffer; other ops have none;
- **outputs**: one.

A fused op's stitchable weights are the distinct graph inputs that its matmul sub-ops
read as ``input1`` (the weight operand); stitching them would free all but one CB.
"""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.model import NetlistOp, operand_kind
from nkigym_graph.buda.netlist import Netlist
from nkigym_graph.errors import PluginError
from nkigym_graph.ir.targets import Target
from nkigym_graph.plugin.registry import get_target
from nkigym_graph.stitching.cb_count import CircularBufferError, KernelBuffers

_ARCH_ALIASES = {"wormhole": "wormhole_b0"}
"""Netlist arch names that denote a built-in target of another name."""


def netlist_arch(netlist: Netlist) -> Target:
    """The target of the netlist's first ``devices.arch``."""
    for name in netlist.arch_names:
        try:
            return get_target(_ARCH_ALIASES.get(name.lower(), name))
        except PluginError:
            continue
    raise CircularBufferError(
        f"netlist {netlist.source} names no known arch (devices.arch: {list(netlist.arch_names)}); "
        "pass arch= (wormhole_b0, blackhole or grayskull)"
    )


def _fused_weights(netlist: Netlist, op: NetlistOp, fused_id: str) -> tuple[str, ...]:
    weights: dict[str, None] = {}
    for _, _, sub_op in netlist.fused_ops[fused_id].sub_ops():
        if sub_op.is_matmul and len(sub_op.inputs) > 1:
            kind, index = operand_kind(sub_op.inputs[1])
            if kind == "input" and index < len(op.inputs):
                weights.setdefault(op.inputs[index])
    return tuple(weights)


def op_kernel(netlist: Netlist, op: NetlistOp) -> KernelBuffers:
    """The CBs of one graph op (the rule of the module docstring)."""
    intermediates: tuple[str, ...] = ()
    groups: tuple[tuple[str, ...], ...] = ()
    if op.type == "fused_op":
        fused_id = op.fused_op_id
        if fused_id is None or fused_id not in netlist.fused_ops:
            raise CircularBufferError(
                f"op {op.name!r} (line {op.line}) runs fused op {fused_id!r}, which {netlist.source} "
                "does not define"
            )
        intermediates = tuple(f"intermed{i}" for i in range(netlist.fused_ops[fused_id].intermediates))
        weights = _fused_weights(netlist, op, fused_id)
        groups = (weights,) if len(weights) > 1 else ()
    elif op.type == "matmul" and int(op.attributes.get("m_k", 1)) > 1:
        intermediates = ("partials",)
    return KernelBuffers(
        name=op.name,
        inputs=tuple(dict.fromkeys(op.inputs)),
        intermediates=intermediates,
        outputs=(op.name,),
        weight_groups=groups,
    )


def netlist_kernels(netlist: Netlist) -> Iterator[KernelBuffers]:
    """The CBs of every graph op, in file order."""
    for op in netlist.all_ops():
        yield op_kernel(netlist, op)
