"""Names, operands and op types: what the backend's parser rejects before any fusion rule."""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, FusedContext, NetlistContext
from nkigym_graph.buda.model import operand_kind
from nkigym_graph.buda.optypes import (
    GRAPH_OP_TYPES,
    MATH_FIDELITIES,
    SUB_OP_TYPES,
    UNFUSABLE,
    arity,
    graph_input_counts,
)
from nkigym_graph.buda.rules.registry import fused_rule, netlist_rule


@fused_rule("names.duplicate_sub_op", "sub-op names are unique within a fused op")
def unique_sub_op_names(ctx: FusedContext) -> Iterator[Finding]:
    """Backend check: "Duplicate op_name={} inside fused op fused_op_id={}"."""
    seen: set[str] = set()
    for s, _, sub in ctx.steps():
        if sub.name in seen:
            yield ctx.finding(f"a sub-op named '{sub.name}' already exists in this fused op", s, sub)
        seen.add(sub.name)


@netlist_rule("names.duplicate_definition", "queue, graph, op and fused op names are defined once")
def unique_definitions(ctx: NetlistContext) -> Iterator[Finding]:
    """Backend parser: a repeated queue, graph, op or fused op name is an error ("duplicate
    op name", "failed to insert queue ... duplicate name"); a name is either a queue or an
    op; an op name is used in one graph only."""
    netlist = ctx.netlist
    for section, dup in netlist.duplicates:
        yield Finding(f"{section}: '{dup.key}' defined on line {dup.first_line} and again on line {dup.line}")
    graphs_of: dict[str, list[str]] = {}
    for op in netlist.all_ops():
        graphs_of.setdefault(op.name, []).append(op.graph)
        if op.name in netlist.queues:
            yield Finding(f"'{op.name}' is both a queue and an op (graph '{op.graph}')", graph_op=op.name)
    for name, graphs in graphs_of.items():
        if len(graphs) > 1:
            yield Finding(f"op '{name}' is defined in graphs {graphs}", graph_op=name)


@fused_rule(
    "operands.unknown",
    "operands are input<i>, intermed<k> or dest; outputs intermed<k>, dest or output",
)
def known_operands(ctx: FusedContext) -> Iterator[Finding]:
    """Backend checks: sub-op inputs are ``input<i>`` (i < the fused op's ``inputs``),
    ``intermed<k>`` (k < ``intermediates``) or ``dest``; the output is ``intermed<k>``,
    ``dest`` or ``output``."""
    limits = {"input": ctx.fused.inputs, "intermed": ctx.fused.intermediates}
    for s, _, sub in ctx.steps():
        for index, name in enumerate(sub.inputs):
            kind, number = operand_kind(name)
            if kind in ("unknown", "output") or (kind in limits and number >= limits[kind]):
                yield ctx.finding(
                    f"input {index} '{name}' is not an operand of this fused op ({_limits_text(ctx)})",
                    s,
                    sub,
                )
        kind, number = operand_kind(sub.output)
        if kind in ("unknown", "input") or (kind == "intermed" and number >= limits["intermed"]):
            yield ctx.finding(
                f"output '{sub.output}' is not intermed<k>, dest or output ({_limits_text(ctx)})",
                s,
                sub,
            )


def _limits_text(ctx: FusedContext) -> str:
    return f"inputs: {ctx.fused.inputs}, intermediates: {ctx.fused.intermediates}"


@fused_rule("operands.pop", "pop/pop_last name the sub-op's own inputs, once")
def pop_lists(ctx: FusedContext) -> Iterator[Finding]:
    """Backend checks: each ``pop``/``pop_last`` entry is one of the sub-op's inputs, is
    listed once, not in both lists, and ``pop_last`` entries are intermediates."""
    for s, _, sub in ctx.steps():
        for field_name, names in (("pop", sub.pop), ("pop_last", sub.pop_last)):
            for name in sorted(set(names)):
                if name not in sub.inputs:
                    yield ctx.finding(f"{field_name} lists '{name}', which is not one of its inputs", s, sub)
                if names.count(name) > 1:
                    yield ctx.finding(f"{field_name} lists '{name}' twice", s, sub)
        for name in sorted(set(sub.pop) & set(sub.pop_last)):
            yield ctx.finding(f"'{name}' is in both pop and pop_last", s, sub)
        for name in sub.pop_last:
            if not name.startswith("intermed"):
                yield ctx.finding(f"pop_last lists '{name}'; only intermediates can be popped last", s, sub)


@netlist_rule("ops.unknown_type", "op and sub-op types are known Buda ops")
def known_types(ctx: NetlistContext) -> Iterator[Finding]:
    """Backend parser: an unknown op type is an error. (``relu`` is not a type: Buda applies
    it with the ``relu_en`` attribute of another op.)"""
    for fused in ctx.netlist.fused_ops.values():
        for s, _, sub in fused.sub_ops():
            if sub.type not in SUB_OP_TYPES | UNFUSABLE:
                yield Finding(f"unknown sub-op type '{sub.type}'", s, sub.name, fused_op=fused.id)
    for op in ctx.netlist.all_ops():
        if op.type not in GRAPH_OP_TYPES:
            yield Finding(f"op '{op.name}' has unknown type '{op.type}'", graph_op=op.name)


@netlist_rule("ops.math_fidelity", "math_fidelity is LoFi, HiFi2, HiFi3, HiFi4, HiFi2_A or HiFi2_B")
def known_math_fidelity(ctx: NetlistContext) -> Iterator[Finding]:
    """Backend parser (``get_fidelity``): a graph op's ``math_fidelity`` other than these,
    spelled exactly so, is an error ("Math Fidelity not supported in netlist")."""
    for op in ctx.netlist.all_ops():
        if op.math_fidelity is not None and op.math_fidelity not in MATH_FIDELITIES:
            yield Finding(
                f"op '{op.name}': unknown math_fidelity '{op.math_fidelity}'; "
                f"known: {', '.join(MATH_FIDELITIES)}",
                graph_op=op.name,
            )


@fused_rule("ops.arity", "each sub-op has as many inputs as its type takes")
def input_counts(ctx: FusedContext) -> Iterator[Finding]:
    """Unary and SFPU ops and reduce take 1 input, binary ops and matmul take 2."""
    for s, _, sub in ctx.steps():
        expected = arity(sub.type)
        if expected is not None and len(sub.inputs) != expected:
            yield ctx.finding(f"{sub.type} takes {expected} input(s), got {len(sub.inputs)}", s, sub)


@netlist_rule("ops.graph_arity", "each graph op has as many inputs as its type takes")
def graph_input_count(ctx: NetlistContext) -> Iterator[Finding]:
    """As ``ops.arity`` for graph ops: unary and SFPU ops and reduce take 1 input, binary
    ops 2, a matmul 2 to 4 (a bias, a sparse or quantizing matmul's extra operands)."""
    for op in ctx.netlist.all_ops():
        counts = graph_input_counts(op.type)
        if counts is not None and len(op.inputs) not in counts:
            takes = str(counts[0]) if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
            yield Finding(
                f"op '{op.name}': {op.type} takes {takes} input(s), got {len(op.inputs)}", graph_op=op.name
            )


@netlist_rule("ops.reduce_type", "reduce type is max")
def reduce_type_max(ctx: NetlistContext) -> Iterator[Finding]:
    """Backend parser (``get_valid_reduce_func``): only ``type: max`` reduces exist; sums and
    means are matmuls with a constant vector. (The evaluator also runs ``sum``.)"""
    for fused in ctx.netlist.fused_ops.values():
        for s, _, sub in fused.sub_ops():
            if sub.is_reduce and sub.reduce_type != "max":
                yield Finding(
                    f"reduce type '{sub.reduce_type}'; only max is supported",
                    s,
                    sub.name,
                    fused_op=fused.id,
                )
    for op in ctx.netlist.all_ops():
        kind = op.attributes.get("type")
        if op.type == "reduce" and kind != "max":
            yield Finding(f"op '{op.name}': reduce type '{kind}'; only max is supported", graph_op=op.name)
