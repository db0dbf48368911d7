"""Sub-op dimension checks of the backend (``verify_op_dims``), plus the fused op's output.

Only inputs with known dims are checked (intermediates and dest, from the sub-op that
wrote them); external inputs may be reblocked by the pipes that feed the op.
"""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, FusedContext
from nkigym_graph.buda.optypes import BINARY, SFPU, UNARY, is_matmul_or_reduce
from nkigym_graph.buda.rules.registry import fused_rule
from nkigym_graph.buda.tms import broadcast_factor


@fused_rule("dims.unary_binary", "unary/binary output dims = input mblock x ublock x broadcast")
def eltwise_dims(ctx: FusedContext) -> Iterator[Finding]:
    """Backend check ("Dimension mismatch in op"): for unary, SFPU and binary sub-ops,
    input tile rows x r-broadcast = output tile rows, and the same for columns (tile rows
    = mblock_m * ublock_rt). Splitting the same tiles differently is unsupported.4."""
    for read in ctx.reads:
        sub, dims = read.sub_op, read.dims
        if dims is None or sub.type not in UNARY | SFPU | BINARY:
            continue
        rows = dims.rows * broadcast_factor(read.tms, "r")
        cols = dims.cols * broadcast_factor(read.tms, "c")
        if (rows, cols) != (sub.dims.rows, sub.dims.cols):
            yield ctx.finding(
                f"input {read.index} ('{read.name}', {dims}) gives {rows}x{cols} tiles "
                "after broadcast, "
                f"output ({sub.dims}) is {sub.dims.rows}x{sub.dims.cols}",
                read.schedule,
                sub,
            )


@fused_rule(
    "dims.matmul",
    "matmul: input0 mblock_n/ublock_ct = m_k/u_kt, input1 mblock_m/ublock_rt = m_k/u_kt",
)
def matmul_dims(ctx: FusedContext) -> Iterator[Finding]:
    """Backend check: input 0 has mblock_n = m_k and ublock_ct = u_kt (with a c broadcast:
    mblock_n * ublock_ct * factor = m_k * u_kt) and the output's mblock_m / ublock_rt;
    input 1 has mblock_m = m_k, ublock_rt = u_kt and the output's mblock_n / ublock_ct."""
    for read in ctx.reads:
        sub, dims = read.sub_op, read.dims
        k = sub.inner
        if not sub.is_matmul or dims is None or read.index > 1 or k is None:
            continue
        out = sub.dims
        if read.index == 0:
            factor = broadcast_factor(read.tms, "c")
            inner_ok = (
                (dims.mblock[1], dims.ublock[1]) == k if factor == 1 else dims.cols * factor == k[0] * k[1]
            )
            outer_ok = (dims.mblock[0], dims.ublock[0]) == (out.mblock[0], out.ublock[0])
        else:
            inner_ok = (dims.mblock[0], dims.ublock[0]) == k
            outer_ok = (dims.mblock[1], dims.ublock[1]) == (out.mblock[1], out.ublock[1])
        if not (inner_ok and outer_ok):
            yield ctx.finding(
                f"input {read.index} ('{read.name}', {dims}) does not fit m_k={k[0]}, u_kt={k[1]} "
                f"and output {out}",
                read.schedule,
                sub,
            )


@fused_rule("dims.reduce", "reduce: dim r or c; input blocks match m_k/u_kt; output one tile row/column")
def reduce_dims(ctx: FusedContext) -> Iterator[Finding]:
    """Backend check: a fused reduce has ``dim`` r or c. For ``dim: r`` the output has
    mblock_m = ublock_rt = 1, and a known input has mblock_m = m_k, ublock_rt = u_kt and
    the output's columns; ``dim: c`` is the same with rows and columns swapped."""
    for s, _, sub in ctx.steps():
        if not sub.is_reduce:
            continue
        if sub.reduce_dim not in ("r", "c"):
            yield ctx.finding(f"reduce dim {sub.reduce_dim} in a fused op; use r or c", s, sub)
            continue
        axis = 0 if sub.reduce_dim == "r" else 1
        other = 1 - axis
        out = sub.dims
        if (out.mblock[axis], out.ublock[axis]) != (1, 1):
            yield ctx.finding(
                f"reduce over {sub.reduce_dim} must output one tile along it, got {out}", s, sub
            )
        for read in ctx.reads_of(sub)[:1]:
            dims = read.dims
            if dims is None or sub.inner is None:
                continue
            if (dims.mblock[axis], dims.ublock[axis]) != sub.inner or (
                dims.mblock[other],
                dims.ublock[other],
            ) != (out.mblock[other], out.ublock[other]):
                yield ctx.finding(
                    f"input '{read.name}' ({dims}) does not fit "
                    f"m_k={sub.m_k}, u_kt={sub.u_kt} and output {out}",
                    s,
                    sub,
                )


@fused_rule("dims.fused_output", "the sub-op writing output matches the graph op's tiles per core")
def fused_output_dims(ctx: FusedContext) -> Iterator[Finding]:
    """The sub-op writing ``output`` produces as many tile rows and columns per core as
    the graph op declares (mblock x ublock)."""
    if ctx.op is None:
        return
    op_dims = ctx.op.dims
    for s, _, sub in ctx.steps():
        if sub.output == "output" and (sub.dims.rows, sub.dims.cols) != (
            op_dims.rows,
            op_dims.cols,
        ):
            yield ctx.finding(
                f"writes output as {sub.dims} ({sub.dims.rows}x{sub.dims.cols} tiles), graph op "
                f"'{ctx.op.name}' has {op_dims} ({op_dims.rows}x{op_dims.cols} tiles)",
                s,
                sub,
                True,
            )


@fused_rule("dims.m_k_u_kt", "a fused matmul/reduce gives m_k and u_kt")
def inner_attributes(ctx: FusedContext) -> Iterator[Finding]:
    """Backend: a scheduled matmul/reduce splits its inner dim into ``m_k`` blocks of
    ``u_kt`` tiles, and ``verify_op_dims`` compares the operand blocks with both; neither
    has a default. (An older checker took 1 for a missing value.)"""
    for s, _, sub in ctx.steps():
        if is_matmul_or_reduce(sub.type) and sub.inner is None:
            missing = [name for name in ("m_k", "u_kt") if sub.attributes.get(name) is None]
            yield ctx.finding(
                f"missing m_k/u_kt: {sub.type} has no {' or '.join(missing)} in its attributes", s, sub
            )
