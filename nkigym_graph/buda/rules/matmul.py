"""Seed 004 "Matmul" rules 12-18 (15, 16 and 17 repeat 12, 13 and 14 word for word)."""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, FusedContext
from nkigym_graph.buda.optypes import is_matmul_or_reduce
from nkigym_graph.buda.rules.registry import fused_rule


@fused_rule(
    "matmul.12",
    "matmul input 1 forks only if a column of ublocks or only to other matmul inputs 1",
    aliases=("matmul.15",),
)
def input1_fork(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 12 (and 15): "Matmul input1 can be forked only if it's a column of ublocks or
    if it's fork(s) go to another matmul input1." Input 1 is a column of ublocks when the
    matmul's output mblock has one column (input 1 is [m_k, 1] mblocks)."""
    for read in ctx.reads:
        sub = read.sub_op
        if not (sub.is_matmul and read.index == 1 and read.forked) or sub.dims.mblock[1] == 1:
            continue
        others = [(c, i) for c, i in read.consumers if c is not sub]
        if all(c.is_matmul and i == 1 for c, i in others):
            continue
        names = sorted({c.name for c, _ in others})
        yield ctx.finding(
            f"input 1 ('{read.name}') is not a column of ublocks (mblock_n = {sub.dims.mblock[1]}) "
            f"and is forked to {names}, not only to matmul inputs 1",
            read.schedule,
            sub,
        )


@fused_rule(
    "matmul.13",
    "matmul input 0 from an intermediate only if input 1 is a column of ublocks",
    aliases=("matmul.16",),
)
def input0_intermed(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 13 (and 16): "Matmul input 0 can come from the intermediate buffer only if
    input 1 of the matmul is a column of ublocks." """
    for read in ctx.reads:
        sub = read.sub_op
        if sub.is_matmul and read.index == 0 and read.kind == "intermed" and sub.dims.mblock[1] != 1:
            yield ctx.finding(
                f"input 0 comes from {read.name} but input 1 is not a column of ublocks "
                f"(output mblock_n = {sub.dims.mblock[1]})",
                read.schedule,
                sub,
            )


@fused_rule(
    "matmul.14",
    "matmul input 1 from an intermediate only with mblock [1, 1]",
    aliases=("matmul.17",),
)
def input1_intermed(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 14 (and 17): "Matmul input 1 can come from the intermediate buffer only if its
    mblock dimensions are [1, 1] because intermed buffer can fit only 2 ublocks with
    double buffering. Otherwise, it needs to come from the fused op input buffer." """
    for read in ctx.reads:
        sub = read.sub_op
        if not (sub.is_matmul and read.index == 1 and read.kind == "intermed" and read.dims):
            continue
        if tuple(read.dims.mblock) != (1, 1):
            yield ctx.finding(
                f"input 1 comes from {read.name} with mblock {list(read.dims.mblock)}; "
                "an intermediate holds only [1, 1] mblocks, use a fused op input",
                read.schedule,
                sub,
            )


@fused_rule("matmul.18", "matmul/reduce with m_k > 1 outputs to an intermediate")
def m_k_output(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 18: "Matmul and reduce op cannot output directly to output if m_k != 1 - they
    need to output to intermediate buffer in this case." """
    for s, _, sub in ctx.steps():
        if is_matmul_or_reduce(sub.type) and sub.m_k != 1 and not sub.output.startswith("intermed"):
            yield ctx.finding(
                f"{sub.type} with m_k = {sub.m_k} outputs to {sub.output}; it must output to an intermediate",
                s,
                sub,
            )
