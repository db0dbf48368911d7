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


RETIRED = 'upstream retired it (tt-budabackend commit 09feebee, "Enable fusing of non column matmul part 2")'


@fused_rule(
    "matmul.13",
    "matmul input 0 from an intermediate only if input 1 is a column of ublocks (retired upstream)",
    aliases=("matmul.16",),
)
def input0_intermed(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 13 (and 16): "Matmul input 0 can come from the intermediate buffer only if
    input 1 of the matmul is a column of ublocks." Retired upstream a few days after the
    seed's text (commit 09feebee grows the intermediate to hold m_k ublocks of input 0);
    the backend's CI runs such a fused op on silicon. Reported as info only."""
    for read in ctx.reads:
        sub = read.sub_op
        if sub.is_matmul and read.index == 0 and read.kind == "intermed" and sub.dims.mblock[1] != 1:
            yield ctx.finding(
                f"input 0 comes from {read.name} and input 1 is not a column of ublocks "
                f"(output mblock_n = {sub.dims.mblock[1]}); {RETIRED}",
                read.schedule,
                sub,
            )


@fused_rule(
    "matmul.14",
    "matmul input 1 from a fused-op input unless m_k = 1; from an intermediate only with mblock [1, 1]",
    aliases=("matmul.17",),
)
def input1_intermed(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 14 (and 17): "Matmul input 1 can come from the intermediate buffer only if its
    mblock dimensions are [1, 1] because intermed buffer can fit only 2 ublocks with double
    buffering. Otherwise, it needs to come from the fused op input buffer." The backend
    asserts only that input 1 is a fused-op input when ``m_k != 1`` (an error); an
    intermediate input 1 with a larger mblock but ``m_k = 1`` is checked by no code (a
    warning)."""
    for s, _, sub in ctx.steps():
        if not sub.is_matmul or len(sub.inputs) < 2:
            continue
        name = sub.inputs[1]
        m_k = sub.m_k
        if not name.startswith("input") and m_k is not None and m_k != 1:
            yield ctx.finding(
                f"input 1 is '{name}' with m_k = {m_k}; only a fused-op input can be input 1 when m_k != 1",
                s,
                sub,
            )
            continue
        reads = [r for r in ctx.reads_of(sub) if r.index == 1]
        dims = reads[0].dims if reads else None
        if name.startswith("intermed") and dims is not None and tuple(dims.mblock) != (1, 1):
            yield ctx.finding(
                f"input 1 comes from {name} with mblock {list(dims.mblock)}; "
                "an intermediate holds only [1, 1] mblocks, use a fused op input",
                s,
                sub,
                severity="warning",
            )


@fused_rule("matmul.18", "matmul/reduce with m_k > 1 outputs to an intermediate")
def m_k_output(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 18: "Matmul and reduce op cannot output directly to output if m_k != 1 - they
    need to output to intermediate buffer in this case." (The backend asserts it for
    ``m_k > 1``.)"""
    for s, _, sub in ctx.steps():
        m_k = sub.m_k
        if (
            is_matmul_or_reduce(sub.type)
            and m_k is not None
            and m_k > 1
            and not sub.output.startswith("intermed")
        ):
            yield ctx.finding(
                f"{sub.type} with m_k = {m_k} outputs to {sub.output}; it must output to an intermediate",
                s,
                sub,
            )
