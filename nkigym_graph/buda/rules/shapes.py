"""Graph-level shapes: what an op reads against what its producers make.

A queue or op makes a tensor of ``(t, rows, cols)`` tiles (``t x grid x mblock x ublock``);
an op's input, after the input's TMs (:data:`~nkigym_graph.buda.tms.TM_SHAPES`), must give
the tiles the op reads (:mod:`nkigym_graph.buda.op_shapes`), and a queue written by an op
must hold what the op writes (after the queue's ``input_tms``). Fused ops' inputs are left to
the sub-op dimension rules (``dims.*``); an input after a TM whose effect is not modelled
(``pad``, an unknown TM: rule ``tms.unknown``) or with padding (``input_<i>_pad``,
``input_<i>_unpad``) is not compared.
"""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, NetlistContext
from nkigym_graph.buda.model import NetlistOp, Queue
from nkigym_graph.buda.netlist import Netlist
from nkigym_graph.buda.op_shapes import input_reads
from nkigym_graph.buda.optypes import SPARSE_MATMUL_ATTRIBUTES
from nkigym_graph.buda.rules.registry import netlist_rule
from nkigym_graph.buda.tms import Shape, tms_shape


def _tiles(shape: Shape) -> str:
    t, rows, cols = shape
    return f"{rows}x{cols} tiles, t {t}"


def _layout(item: Queue | NetlistOp) -> str:
    return (
        f"grid_size {list(item.grid_size)}, t {item.t}, mblock {list(item.dims.mblock)}, "
        f"ublock {list(item.dims.ublock)}"
    )


def _input_shape(netlist: Netlist, op: NetlistOp, index: int) -> Shape | None:
    """What ``op``'s input ``index`` gives after its TMs; None when unknown (no such
    producer, a TM not modelled, or the input's ``input_<i>_pad`` / ``input_<i>_unpad``
    padding). A TM that cannot apply raises ``ValueError`` naming it."""
    producer = netlist.producer(op.inputs[index])
    if producer is None or any(f"input_{index}_{key}" in op.spec for key in ("pad", "unpad")):
        return None
    return tms_shape(producer.tiles, op.input_tms(index))


@netlist_rule("shapes.inputs", "an op's inputs, after their TMs, give the tiles the op reads")
def inputs_fit(ctx: NetlistContext) -> Iterator[Finding]:
    """Every graph op input, through its ``input_<i>_tms``, gives a tensor of the shape the
    op reads of it (elementwise ops: their output's; a matmul: its output's rows for input
    0, columns for input 1; a reduce: the dims it keeps); a TM that cannot apply (a slice
    or stack factor that does not divide) is named. The evaluator refuses the same."""
    for op in ctx.netlist.all_ops():
        reads = input_reads(op)
        for index, name in enumerate(op.inputs):
            try:
                shape = _input_shape(ctx.netlist, op, index)
            except ValueError as err:
                yield Finding(f"op '{op.name}' input {index} ('{name}'): {err}", graph_op=op.name)
                continue
            if shape is not None and index < len(reads) and not reads[index].accepts(shape):
                yield Finding(
                    f"op '{op.name}' input {index} ('{name}') gives {_tiles(shape)} after its TMs; "
                    f"{op.type} reads {reads[index]}",
                    graph_op=op.name,
                )


@netlist_rule("shapes.matmul_inner", "a matmul's m_k * u_kt tiles is the inner dim its inputs give")
def matmul_inner(ctx: NetlistContext) -> Iterator[Finding]:
    """A graph matmul gives ``m_k`` and ``u_kt`` (the backend asserts both are >= 1) and
    contracts ``m_k * u_kt`` tiles: input 0's columns and input 1's rows after their TMs.
    Sparse matmuls (``identity`` and its attributes) read their inputs differently and are
    not checked."""
    for op in ctx.netlist.all_ops():
        if op.type != "matmul" or any(op.attributes.get(a) for a in SPARSE_MATMUL_ATTRIBUTES):
            continue
        if op.inner is None:
            missing = ", ".join(key for key in ("m_k", "u_kt") if op.attributes.get(key) is None)
            yield Finding(
                f"op '{op.name}': a matmul needs attributes m_k and u_kt (its inner dim in tiles), "
                f"missing {missing}",
                graph_op=op.name,
            )
            continue
        m_k, u_kt = op.inner
        for index, axis, what in ((0, 2, "tile columns"), (1, 1, "tile rows")):
            if index >= len(op.inputs):
                continue
            try:
                shape = _input_shape(ctx.netlist, op, index)
            except ValueError:
                continue  # shapes.inputs names the TM
            if shape is not None and shape[axis] != m_k * u_kt:
                yield Finding(
                    f"op '{op.name}': input {index} ('{op.inputs[index]}') has {shape[axis]} {what} "
                    f"after its TMs, but m_k * u_kt = {m_k} * {u_kt} = {m_k * u_kt} tiles",
                    graph_op=op.name,
                )


@netlist_rule("shapes.output_queue", "a queue holds the tiles its op writes (after the queue's input_tms)")
def output_queues_fit(ctx: NetlistContext) -> Iterator[Finding]:
    """A queue whose ``input`` is an op holds that op's output tensor, through the queue's
    ``input_tms``: the same ``t`` and tile rows and columns (``grid_size x mblock x ublock``
    may split them differently)."""
    for queue in ctx.netlist.queues.values():
        op = None if queue.is_host_input else ctx.netlist.op(queue.input)
        if op is None:
            continue
        try:
            shape = tms_shape(op.tiles, queue.input_tms)
        except ValueError as err:
            yield Finding(f"queue '{queue.name}' input_tms: {err}", graph_op=op.name)
            continue
        if shape is not None and shape != queue.tiles:
            after = " (after the queue's input_tms)" if queue.input_tms else ""
            yield Finding(
                f"queue '{queue.name}' ({_layout(queue)}) holds {_tiles(queue.tiles)}; "
                f"op '{op.name}' writes {_tiles(shape)}{after}",
                graph_op=op.name,
            )
