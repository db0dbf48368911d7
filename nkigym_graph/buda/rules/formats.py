"""Data-format checks of the backend beyond the seed's integer rules."""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, NetlistContext
from nkigym_graph.buda.model import NetlistOp
from nkigym_graph.buda.rules.registry import netlist_rule

EXP_A_FORMATS = frozenset({"Float16", "Bfp8", "Bfp4", "Bfp2"})
"""Formats with the 5-bit ("a") exponent (``netlist_utils::is_exp_a_format``)."""


def _reduce_inputs(ctx: NetlistContext, op: NetlistOp) -> tuple[list[int], str | None]:
    """The inputs of ``op`` whose format its reduce constrains, and the sub-op doing the
    reduce (None for a reduce graph op); no inputs when ``op`` does not reduce."""
    if op.type == "reduce":
        return [0], None
    fused = ctx.netlist.fused_ops.get(op.fused_op_id or "") if op.type == "fused_op" else None
    reducer = next((sub for _, _, sub in fused.sub_ops() if sub.is_reduce), None) if fused else None
    if reducer is None:
        return [], None
    return list(range(len(op.in_df))), reducer.name


@netlist_rule(
    "formats.reduce_exp_a", "a reduce with a Float32 dest reads no exponent-a (Float16, Bfp8) input"
)
def reduce_reads_no_exp_a(ctx: NetlistContext) -> Iterator[Finding]:
    """Backend checks (tenstorrent/budabackend#1464): a reduce graph op with ``acc_df:
    Float32`` cannot have an exponent-a input 0 ("Reduce op cannot have input of a-type
    and dest in F32 format"), and a fused op with a reduce sub-op and ``acc_df: Float32``
    none among its inputs ("Fused op with reduce and dest accumulation in F32 cannot have
    inputs of a-type")."""
    for op in ctx.netlist.all_ops():
        if op.acc_df != "Float32":
            continue
        indexes, reducer = _reduce_inputs(ctx, op)
        found = [
            f"in_df[{i}] = {op.in_df[i]}"
            for i in indexes
            if i < len(op.in_df) and op.in_df[i] in EXP_A_FORMATS
        ]
        if found:
            what = f"its reduce sub-op '{reducer}'" if reducer else "it reduces"
            yield Finding(
                f"op '{op.name}': {what} with acc_df Float32 and exponent-a input format(s) "
                f"{', '.join(found)}; use acc_df Float16 or Float16_b/Bfp8_b inputs",
                sub_op=reducer,
                graph_op=op.name,
                fused_op=op.fused_op_id if reducer else None,
            )
