"""Size limits of fused ops and of the dest register, read from the target's facts."""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import FP32_ACC_FORMATS, Finding, FusedContext, NetlistContext
from nkigym_graph.buda.rules.registry import fused_rule, netlist_rule
from nkigym_graph.ir.targets import Target


@fused_rule("limits.intermediates", "at most 8 intermediates per fused op")
def intermediates_limit(ctx: FusedContext) -> Iterator[Finding]:
    """Backend check: "num_intermediates={} used is more than MAX_NUM_INTERMEDIATE_BUFFERS"."""
    limit = int(ctx.target.facts["fused_max_intermediates"])
    if ctx.fused.intermediates > limit:
        yield ctx.finding(f"{ctx.fused.intermediates} intermediates; at most {limit}")


@fused_rule("limits.inputs", "at most 16 inputs per fused op")
def inputs_limit(ctx: FusedContext) -> Iterator[Finding]:
    """Backend limit FUSED_OP_MAX_NUM_INPUTS (16 inputs)."""
    limit = int(ctx.target.facts["fused_max_inputs"])
    if ctx.fused.inputs > limit:
        yield ctx.finding(f"{ctx.fused.inputs} inputs; at most {limit}")


def dest_tiles(target: Target, acc_df: str | None) -> int:
    """Tiles of one ublock that fit in dest: 8 with 16-bit accumulation, 4 with Float32/Int32."""
    key = "dest_tiles_32bit" if acc_df in FP32_ACC_FORMATS else "dest_tiles_16bit"
    return int(target.facts[key])


@netlist_rule("limits.dest_ublock", "a ublock fits in dest: 8 tiles (16-bit acc) or 4 (Float32/Int32 acc)")
def ublock_fits_dest(ctx: NetlistContext) -> Iterator[Finding]:
    """Backend check ("ublock cannot fit into dest"): ublock_rt * ublock_ct of every graph
    op, and of every sub-op of a fused op with the accumulation format of the graph op
    running it (16-bit when no graph op runs it)."""
    for op in ctx.netlist.all_ops():
        limit = dest_tiles(ctx.target, op.acc_df)
        if op.dims.ublock_tiles > limit:
            yield Finding(
                f"op '{op.name}': ublock {list(op.dims.ublock)} is {op.dims.ublock_tiles} tiles, "
                f"dest holds {limit} with acc_df {op.acc_df}",
                graph_op=op.name,
            )
    for fused in ctx.netlist.fused_ops.values():
        acc_formats = {op.acc_df for op in ctx.netlist.instances(fused.id)} or {None}
        for acc_df in sorted(acc_formats, key=str):
            limit = dest_tiles(ctx.target, acc_df)
            for s, _, sub in fused.sub_ops():
                if sub.dims.ublock_tiles > limit:
                    yield Finding(
                        f"ublock {list(sub.dims.ublock)} is {sub.dims.ublock_tiles} tiles, "
                        "dest holds "
                        f"{limit} with acc_df {acc_df or 'of 16 bits'}",
                        s,
                        sub.name,
                        fused_op=fused.id,
                    )
