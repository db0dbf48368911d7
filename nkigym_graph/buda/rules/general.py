"""Seed 004 "General constraints" 1-9, plus the dest-lifetime check of the backend's golden
model."""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, FusedContext
from nkigym_graph.buda.optypes import FPU_BINARY, is_matmul_or_reduce
from nkigym_graph.buda.rules.registry import fused_rule


@fused_rule("general.1", "tile_broadcast only on input 1 of add/subtract/multiply")
def tile_broadcast_on_input1(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Intra tile broadcast (tile_broadcast in the netlist) is supported only on
    input 1 since hardware allows tile broadcast only on source B. Also tile_broadcast is
    only supported on binary ops (add, sub, mul)." """
    for s, _, sub in ctx.steps():
        for index, tms in sorted(sub.tms.items()):
            if any(tm.name == "tile_broadcast" for tm in tms) and (index != 1 or sub.type not in FPU_BINARY):
                yield ctx.finding(
                    f"tile_broadcast on input {index} of a {sub.type} op; it is only supported "
                    "on input 1 of add, subtract and multiply",
                    s,
                    sub,
                )


@fused_rule("general.2", "dest cannot be forked")
def dest_not_forked(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Dest cannot be forked." A dest value is forked when more than one sub-op
    reads it before it is written again."""
    seen: set[int] = set()
    for read in ctx.reads:
        if read.kind == "dest" and read.forked and id(read.consumers) not in seen:
            seen.add(id(read.consumers))
            names = sorted({c.name for c, _ in read.consumers})
            yield ctx.finding(f"dest is forked: read by sub-ops {names}", read.schedule, read.sub_op)


@fused_rule("general.3", "dest cannot be input 1 on Grayskull")
def dest_not_input1_on_grayskull(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Dest cannot be used as input 1 on Grayskull because of the hardware limitations." """
    if ctx.target.name != "grayskull":
        return
    for read in ctx.reads:
        if read.kind == "dest" and read.index == 1:
            yield ctx.finding("dest is input 1, which Grayskull does not support", read.schedule, read.sub_op)


@fused_rule("general.4", "dest cannot be an input of matmul or reduce")
def dest_not_into_matmul_reduce(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Dest cannot be used as an input of matmul and reduce ops, since they use dest
    to load intermediate results." """
    for read in ctx.reads:
        if read.kind == "dest" and is_matmul_or_reduce(read.sub_op.type):
            yield ctx.finding(
                f"dest is input {read.index} of a {read.sub_op.type}, which accumulates in dest",
                read.schedule,
                read.sub_op,
            )


@fused_rule("general.5", "dest cannot be an input of maximum")
def dest_not_into_maximum(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Dest cannot be used as an input of maximum op." """
    for read in ctx.reads:
        if read.kind == "dest" and read.sub_op.type == "maximum":
            yield ctx.finding(f"dest is input {read.index} of a maximum op", read.schedule, read.sub_op)


@fused_rule("general.6", "dest lives within one schedule; matmul/reduce cannot output to dest")
def dest_within_schedule(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Dest cannot be used outside of schedule (as a consequence matmul and reduce
    can't use dest as output)." Checked: a matmul/reduce writing dest, and a dest read
    whose value was written in an earlier schedule."""
    for s, _, sub in ctx.steps():
        if is_matmul_or_reduce(sub.type) and sub.output == "dest":
            yield ctx.finding(f"a {sub.type} cannot output to dest", s, sub)
    for read in ctx.reads:
        if (
            read.kind == "dest"
            and read.producer_schedule is not None
            and read.producer_schedule != read.schedule
        ):
            yield ctx.finding(
                f"dest read in schedule {read.schedule} was written in schedule {read.producer_schedule}",
                read.schedule,
                read.sub_op,
            )


@fused_rule("dest.write_before_read", "dest is read only right after it is written")
def dest_written_before_read(ctx: FusedContext) -> Iterator[Finding]:
    """Backend golden model: every sub-op computes in dest, so a dest value survives only
    while each following sub-op reads it; reading dest that holds no value is an error
    ("dest ... is used as input before being used as an output")."""
    holds_value = False
    for s, _, sub in ctx.steps():
        reads_dest = "dest" in sub.inputs
        if reads_dest and not holds_value:
            yield ctx.finding(
                "reads dest, but no sub-op wrote dest since the last sub-op that did not read it",
                s,
                sub,
            )
        holds_value = sub.output == "dest" or (reads_dest and holds_value)


@fused_rule("general.7", "a new schedule only after a matmul/reduce")
def schedule_cases(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "New schedule is needed only after matmul/reduce op. This means that each
    schedule must represent one of the 3 cases: (1) it contains 1 matmul/reduce as the last
    op (2) it consumes output of the matmul/reduce from previous schedules (3) it is the
    only schedule in the fused op." """
    schedules = ctx.fused.schedules
    if len(schedules) <= 1:
        return
    for s, schedule in enumerate(schedules):
        if schedule and is_matmul_or_reduce(schedule[-1].type):
            continue
        consumes = any(
            r.schedule == s
            and r.kind in ("intermed", "dest")
            and r.producer is not None
            and r.producer_schedule is not None
            and r.producer_schedule < s
            and is_matmul_or_reduce(r.producer.type)
            for r in ctx.reads
        )
        if not consumes:
            yield ctx.finding(
                "schedule neither ends with a matmul/reduce nor consumes a matmul/reduce output "
                "of an earlier schedule (a new schedule is only needed after a matmul or reduce)",
                s,
            )


@fused_rule("general.8", "grid [m, 1] with matmul; broadcast dims of the grid must be 1")
def grid_shape(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Grid size of fused op cannot be arbitrary: (1) If there is matmul, op grid
    size needs to be [m, 1] (2) If there is a broadcast, op grid size dimension being
    broadcasted needs to be 1 ... (row bcast -> grid_size == [1, n], col bcast ->
    grid_size == [m, 1])". Needs the graph op (its ``grid_size``)."""
    if ctx.op is None:
        return
    rows, cols = ctx.op.grid_size
    grid = f"grid_size [{rows}, {cols}]"
    matmuls = [(s, sub) for s, _, sub in ctx.steps() if sub.is_matmul]
    if matmuls and cols != 1:
        s, sub = matmuls[0]
        yield ctx.finding(f"fused op with a matmul needs grid_size [m, 1], graph op has {grid}", s, sub, True)
    for s, _, sub in ctx.steps():
        for index, tms in sorted(sub.tms.items()):
            dims = {tm.dim for tm in tms if tm.name == "broadcast"}
            if "r" in dims and rows != 1:
                yield ctx.finding(
                    f"row broadcast on input {index} needs grid_size [1, n], graph op has {grid}",
                    s,
                    sub,
                    True,
                )
            if "c" in dims and cols != 1:
                yield ctx.finding(
                    f"column broadcast on input {index} needs grid_size [m, 1], graph op has {grid}",
                    s,
                    sub,
                    True,
                )


@fused_rule("general.9", "on a grid other than [1, 1], at most one matmul per NOC")
def matmuls_per_noc(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "If grid size is not [1, 1], than fused op can support only two matmul
    instructions (since we need one mcast per matmul op to send input1 to multiple cores).
    Number of multicasts is limited to two, because we have only two NOCs on
    grayskull/wormhole_b0 device." The limit is the target's NOC count."""
    if ctx.op is None or tuple(ctx.op.grid_size) == (1, 1):
        return
    nocs = int(ctx.target.facts["nocs"])
    matmuls = [(s, sub) for s, _, sub in ctx.steps() if sub.is_matmul]
    if len(matmuls) > nocs:
        s, sub = matmuls[nocs]
        yield ctx.finding(
            f"{len(matmuls)} matmuls on grid_size {list(ctx.op.grid_size)}; at most {nocs} "
            f"(one input-1 multicast per NOC, {ctx.target.name} has {nocs} NOCs)",
            s,
            sub,
            True,
        )
