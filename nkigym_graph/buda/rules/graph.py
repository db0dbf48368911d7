"""Graph-level consistency: programs, fused op references, op inputs, cycles, and placement
on the worker grid."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import networkx as nx

from nkigym_graph.buda.context import Finding, NetlistContext
from nkigym_graph.buda.errors import NetlistEvaluationError
from nkigym_graph.buda.model import NetlistOp
from nkigym_graph.buda.program import executes
from nkigym_graph.buda.rules.registry import netlist_rule


@netlist_rule("graph.programs", "the netlist has a programs section that executes a graph")
def has_programs(ctx: NetlistContext) -> Iterator[Finding]:
    """The backend refuses a netlist whose ``programs`` is empty ("Programs empty for
    netlist parsed"); the numpy evaluator alone runs each graph once without one."""
    if not ctx.netlist.programs:
        yield Finding("the netlist has no programs: the backend runs graphs only through programs")


@netlist_rule("graph.program_graphs", "programs are well formed and execute graphs the netlist defines")
def programs_execute_graphs(ctx: NetlistContext) -> Iterator[Finding]:
    """Each program is a one-key map holding a list of instructions (a name or a one-key
    map); each ``execute`` names, with ``graph_name``, a graph of the netlist. The backend's
    parser refuses a malformed program ("Each entry in programs list must have only 1 map
    specified", "Instruction must be a scalar ... or a map") and running an unknown graph."""
    graphs = ctx.netlist.graphs
    try:
        for where, graph in executes(ctx.netlist):
            if graph not in graphs:
                yield Finding(
                    f"{where} executes graph '{graph}', which is not defined; graphs: {', '.join(graphs)}"
                )
    except NetlistEvaluationError as err:
        yield Finding(str(err))


@netlist_rule("graph.unknown_fused_op", "a fused_op graph op names an existing fused op")
def fused_op_exists(ctx: NetlistContext) -> Iterator[Finding]:
    """A graph op of type ``fused_op`` has ``attributes: {fused_op_id: ID}`` and ``ID`` is a
    key of ``fused_ops``."""
    for op in ctx.netlist.all_ops():
        if op.type != "fused_op":
            continue
        if op.fused_op_id is None:
            yield Finding(f"op '{op.name}' has no attributes.fused_op_id", graph_op=op.name)
        elif op.fused_op_id not in ctx.netlist.fused_ops:
            yield Finding(
                f"op '{op.name}' runs fused op '{op.fused_op_id}', which is not defined",
                graph_op=op.name,
            )


@netlist_rule("graph.fused_op_inputs", "a fused_op graph op has as many inputs as its fused op")
def fused_op_input_count(ctx: NetlistContext) -> Iterator[Finding]:
    """The graph op's ``inputs`` count equals the fused op's ``inputs``."""
    for op in ctx.netlist.all_ops():
        fused = ctx.netlist.fused_ops.get(op.fused_op_id or "") if op.type == "fused_op" else None
        if fused is not None and len(op.inputs) != fused.inputs:
            yield Finding(
                f"op '{op.name}' has {len(op.inputs)} inputs, "
                f"fused op {fused.id} declares inputs: {fused.inputs}",
                graph_op=op.name,
                fused_op=fused.id,
            )


@netlist_rule("graph.unknown_input", "op inputs and queue inputs name existing queues or ops")
def inputs_exist(ctx: NetlistContext) -> Iterator[Finding]:
    """Every op input is a queue or an op; every queue ``input`` is ``HOST`` or an op."""
    netlist = ctx.netlist
    for op in netlist.all_ops():
        for index, name in enumerate(op.inputs):
            if netlist.producer(name) is None:
                yield Finding(
                    f"op '{op.name}' input {index} '{name}' is neither a queue nor an op",
                    graph_op=op.name,
                )
    for queue in netlist.queues.values():
        if not queue.is_host_input and netlist.op(queue.input) is None:
            yield Finding(f"queue '{queue.name}' input '{queue.input}' is neither HOST nor an op")


def _cycles(ops: Mapping[str, NetlistOp]) -> list[list[str]]:
    """One cycle (op names, the first repeated at the end) per group of ops that feed each
    other, in file order."""
    flow = nx.DiGraph()
    flow.add_nodes_from(ops)
    flow.add_edges_from((name, op.name) for op in ops.values() for name in op.inputs if name in ops)
    order = {name: position for position, name in enumerate(ops)}
    cycles = []
    for group in nx.strongly_connected_components(flow):
        first = min(group, key=order.__getitem__)
        if len(group) > 1 or flow.has_edge(first, first):
            edges = nx.find_cycle(flow.subgraph(group), source=first)
            cycles.append([edge[0] for edge in edges] + [edges[0][0]])
    return sorted(cycles, key=lambda names: order[names[0]])


@netlist_rule("graph.cycle", "the ops of a graph feed each other in no cycle")
def no_cycles(ctx: NetlistContext) -> Iterator[Finding]:
    """Ops of one graph run in dependency order, so none reads (through other ops) its own
    output; a graph that carries a value from one run to the next does it through a queue."""
    for graph, ops in ctx.netlist.graphs.items():
        for cycle in _cycles(ops):
            yield Finding(f"graph '{graph}': ops {' -> '.join(cycle)} form a cycle", graph_op=cycle[0])


@netlist_rule("graph.grid", "ops are placed inside the worker grid")
def placed_in_grid(ctx: NetlistContext) -> Iterator[Finding]:
    """``grid_loc`` + ``grid_size`` (swapped by ``grid_transpose``) stays inside the target's
    worker grid (rows x columns)."""
    rows, cols = ctx.target.facts["grid"]
    for op in ctx.netlist.all_ops():
        (r, c), (nr, nc) = op.grid_loc, op.cores
        if r < 0 or c < 0 or nr < 1 or nc < 1 or r + nr > rows or c + nc > cols:
            yield Finding(
                f"op '{op.name}' at grid_loc {list(op.grid_loc)} with {nr}x{nc} cores leaves the "
                f"{rows}x{cols} worker grid of {ctx.target.name}",
                graph_op=op.name,
            )


@netlist_rule("graph.core_overlap", "ops of one graph use distinct cores")
def cores_distinct(ctx: NetlistContext) -> Iterator[Finding]:
    """Two ops of the same graph (epoch) cannot share a worker core."""
    for graph, ops in ctx.netlist.graphs.items():
        owner: dict[tuple[int, int], str] = {}
        for op in ops.values():
            (r, c), (nr, nc) = op.grid_loc, op.cores
            clash = {owner[(r + i, c + j)] for i in range(nr) for j in range(nc) if (r + i, c + j) in owner}
            for other in sorted(clash):
                yield Finding(f"graph '{graph}': ops '{other}' and '{op.name}' share cores", graph_op=op.name)
            owner.update({(r + i, c + j): op.name for i in range(nr) for j in range(nc)})
