"""Seed 004 "Broadcasts" rules 19-25, plus the backend's "no internal z broadcast"."""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, FusedContext, OperandRead
from nkigym_graph.buda.model import Dims
from nkigym_graph.buda.rules.registry import fused_rule


def _bcast_dims(read: OperandRead) -> set[str]:
    return {str(tm.dim) for tm in read.tms if tm.name == "broadcast"}


def _eltwise_bcasts(ctx: FusedContext) -> Iterator[tuple[OperandRead, Dims, set[str]]]:
    """Broadcast inputs of non-matmul sub-ops whose dims are known: (read, its dims, r/c)."""
    for read in ctx.reads:
        dims = _bcast_dims(read) & {"r", "c"}
        if dims and read.dims is not None and not read.sub_op.is_matmul:
            yield read, read.dims, dims


@fused_rule("broadcast.19", "the broadcast mblock dim must be 1")
def bcast_mblock_dim(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 19: "Mblock dimension that is broadcasted needs to be 1 (row bcast -> mb_m ==
    1; col bcast -> mb_n == 1) because intermed buffer can fit only 2 ublocks with double
    buffering." """
    for read, known, dims in _eltwise_bcasts(ctx):
        for dim, axis in (("r", 0), ("c", 1)):
            if dim in dims and known.mblock[axis] != 1:
                yield ctx.finding(
                    f"{dim} broadcast of input {read.index} ('{read.name}') with mblock "
                    f"{list(known.mblock)}: the broadcast mblock dim must be 1",
                    read.schedule,
                    read.sub_op,
                )


@fused_rule("broadcast.20", "an mblock row broadcast needs an input mblock column of 1")
def bcast_row_mblock(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 20: "If we do mblock row broadcast, mblock column also needs to be 1 because
    intermed buffer can fit only 2 ublocks with double buffering." (A row broadcast that
    produces more than one mblock row.)"""
    for read, known, dims in _eltwise_bcasts(ctx):
        if "r" in dims and read.sub_op.dims.mblock[0] != 1 and known.mblock[1] != 1:
            yield ctx.finding(
                f"r broadcast of input {read.index} ('{read.name}') "
                f"to {read.sub_op.dims.mblock[0]} "
                f"mblock rows needs input mblock_n = 1, got {known.mblock[1]}",
                read.schedule,
                read.sub_op,
            )


@fused_rule("broadcast.21", "the broadcast ublock dim must be 1")
def bcast_ublock_dim(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 21: "Input ublock dimension that is broadcasted needs to be 1 because HLK
    implementation doesn't support the correct indexing (row bcast -> ub_r == 1; col bcast
    -> ub_c == 1)." """
    for read, known, dims in _eltwise_bcasts(ctx):
        for dim, axis in (("r", 0), ("c", 1)):
            if dim in dims and known.ublock[axis] != 1:
                yield ctx.finding(
                    f"{dim} broadcast of input {read.index} ('{read.name}') with ublock "
                    f"{list(known.ublock)}: the broadcast ublock dim must be 1",
                    read.schedule,
                    read.sub_op,
                )


@fused_rule("broadcast.22", "r/c broadcast only on intermediate inputs")
def bcast_on_intermed(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 22: "R and C broadcast are supported only on the inputs coming from the
    intermediate buffers." """
    for read in ctx.reads:
        if _bcast_dims(read) & {"r", "c"} and read.kind != "intermed":
            yield ctx.finding(
                f"broadcast of input {read.index} ('{read.name}'); broadcasts need an intermediate input",
                read.schedule,
                read.sub_op,
            )


@fused_rule("broadcast.23", "no rc broadcast")
def no_rc_bcast(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 23: "RC broadcast is not supported. (issue #1134)" (r and c broadcast on one input)."""
    for read in ctx.reads:
        if {"r", "c"} <= _bcast_dims(read):
            yield ctx.finding(
                f"r and c broadcast of input {read.index} ('{read.name}')",
                read.schedule,
                read.sub_op,
            )


@fused_rule("broadcast.z", "no z broadcast inside a fused op")
def no_z_bcast(ctx: FusedContext) -> Iterator[Finding]:
    """Backend check: "Fused op does not support internal z broadcast"."""
    for read in ctx.reads:
        if "z" in _bcast_dims(read):
            yield ctx.finding(
                f"z broadcast of input {read.index} ('{read.name}')", read.schedule, read.sub_op
            )


@fused_rule("broadcast.24", "matmul: only c broadcast on input 0, from [m, 1] or [m, m_k] mblocks")
def matmul_bcast(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 24: "Matmul column bcast is supported on input0 only for cases (m, 1)(r, c) ->
    (m, n)(r, k) and (m, n)(r, c) -> (m, n)(r, k)". The backend also rejects any r
    broadcast on a matmul input. The input's mblock_n must be 1 or m_k."""
    for read in ctx.reads:
        sub, dims = read.sub_op, _bcast_dims(read)
        if not sub.is_matmul or not dims & {"r", "c"}:
            continue
        if "r" in dims or read.index != 0:
            yield ctx.finding(
                f"{'/'.join(sorted(dims & {'r', 'c'}))} broadcast of matmul input {read.index}; "
                "only a c broadcast of input 0 is supported",
                read.schedule,
                sub,
            )
        elif read.dims is not None and sub.m_k is not None and read.dims.mblock[1] not in (1, sub.m_k):
            yield ctx.finding(
                f"c broadcast of matmul input 0 with mblock_n = {read.dims.mblock[1]}; "
                f"it must be 1 or m_k = {sub.m_k}",
                read.schedule,
                sub,
            )


@fused_rule(
    "broadcast.25",
    "matmul intermediate inputs: input0 mblock_n/ublock_ct = m_k/u_kt, input1 mblock_m/ublock_rt = m_k/u_kt",
)
def matmul_intermed_dims(ctx: FusedContext) -> Iterator[Finding]:
    """Seed 25: "If input for matmul is coming from intermed buffer, then these constraints
    apply: If input0 is coming from intermed, and it is not broadcasted, then ...
    mblock(m, n) ublock(r, c), n == m_k and c == u_kt. If input1 is coming from intermed,
    then ... m == m_k and r == u_kt." """
    for read in ctx.reads:
        sub, dims = read.sub_op, read.dims
        if not sub.is_matmul or read.kind != "intermed" or dims is None or sub.inner is None:
            continue
        if read.index == 0 and not _bcast_dims(read):
            got = (dims.mblock[1], dims.ublock[1])
        elif read.index == 1:
            got = (dims.mblock[0], dims.ublock[0])
        else:
            continue
        if got != sub.inner:
            side = "mblock_n, ublock_ct" if read.index == 0 else "mblock_m, ublock_rt"
            yield ctx.finding(
                f"input {read.index} ('{read.name}', {dims}) has ({side}) = {list(got)}, "
                f"must equal (m_k, u_kt) = {[sub.m_k, sub.u_kt]}",
                read.schedule,
                sub,
            )
