"""Seed 004 "General constraints" 1-9, plus the dest-lifetime check of the backend's golden
model."""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, FusedContext
from nkigym_graph.buda.model import SubOp
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


@fused_rule(
    "general.7",
    "a matmul/reduce is the last sub-op of its schedule",
    aliases=("schedule.matmul_last",),
)
def schedule_cases(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "New schedule is needed only after matmul/reduce op. This means that each
    schedule must represent one of the 3 cases: (1) it contains 1 matmul/reduce as the last
    op (2) it consumes output of the matmul/reduce from previous schedules (3) it is the
    only schedule in the fused op." The backend's only check is that a matmul/reduce ends
    its schedule ("Matmul/reduce op {} must be the last one in schedule."): the rule says
    where a split is required, not that other splits are forbidden, and valid netlists of
    the backend's CI split after ordinary ops. A split after an ordinary op is reported as
    an info note (it is not needed)."""
    schedules = ctx.fused.schedules
    for s, schedule in enumerate(schedules):
        for sub in schedule[:-1]:
            if is_matmul_or_reduce(sub.type):
                yield ctx.finding(f"{sub.type} must be the last sub-op of its schedule", s, sub)
        if s + 1 < len(schedules) and schedule and not is_matmul_or_reduce(schedule[-1].type):
            yield ctx.finding(
                f"schedule ends with a {schedule[-1].type}, not a matmul/reduce: the split after it "
                "is not needed (allowed)",
                s,
                schedule[-1],
                severity="info",
            )


@fused_rule("general.8", "grid [m, 1] with matmul (info); broadcast dims of the grid must be 1 (warning)")
def grid_shape(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Grid size of fused op cannot be arbitrary: (1) If there is matmul, op grid
    size needs to be [m, 1] (2) If there is a broadcast, op grid size dimension being
    broadcasted needs to be 1 ... (row bcast -> grid_size == [1, n], col bcast ->
    grid_size == [m, 1])". Part (1) is contradicted by a netlist of the backend's CI run on
    silicon (a fused matmul on grid [1, 2]): info. Part (2) is checked by no backend code:
    warning. Needs the graph op (its ``grid_size``)."""
    if ctx.op is None:
        return
    rows, cols = ctx.op.grid_size
    grid = f"grid_size [{rows}, {cols}]"
    matmuls = [(s, sub) for s, _, sub in ctx.steps() if sub.is_matmul]
    if matmuls and cols != 1:
        s, sub = matmuls[0]
        yield ctx.finding(
            f"fused op with a matmul on {grid}; seed 004 asks for [m, 1], the backend accepts it",
            s,
            sub,
            True,
            severity="info",
        )
    for s, _, sub in ctx.steps():
        for index, tms in sorted(sub.tms.items()):
            dims = {tm.dim for tm in tms if tm.name == "broadcast"}
            if "r" in dims and rows != 1:
                yield ctx.finding(
                    f"row broadcast on input {index} needs grid_size [1, n], graph op has {grid}",
                    s,
                    sub,
                    True,
                    severity="warning",
                )
            if "c" in dims and cols != 1:
                yield ctx.finding(
                    f"column broadcast on input {index} needs grid_size [m, 1], graph op has {grid}",
                    s,
                    sub,
                    True,
                    severity="warning",
                )


def multicasts(ctx: FusedContext) -> list[tuple[str, str, int, SubOp]]:
    """The NOC multicasts a fused op's inputs need on its graph op's grid, as net2pipe
    plans them: ``(input, direction, schedule, matmul)``. A fused-op input read as a
    matmul's input 0 is multicast along a row of cores (when the grid has more than one
    column), one read as input 1 along a column (more than one row); intermediates and
    dest are local to each core. Each input is counted once per direction."""
    if ctx.op is None:
        return []
    rows, cols = ctx.op.grid_size
    found: dict[tuple[str, str], tuple[int, SubOp]] = {}
    for read in ctx.reads:
        if read.kind != "input" or not read.sub_op.is_matmul or read.index > 1:
            continue
        direction = "row" if read.index == 0 else "column"
        if (direction == "row" and cols > 1) or (direction == "column" and rows > 1):
            found.setdefault((read.name, direction), (read.schedule, read.sub_op))
    return [(name, direction, s, sub) for (name, direction), (s, sub) in found.items()]


@fused_rule("general.9", "at most one input multicast per NOC (two on Grayskull/Wormhole B0)")
def matmuls_per_noc(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "If grid size is not [1, 1], than fused op can support only two matmul
    instructions (since we need one mcast per matmul op to send input1 to multiple cores).
    Number of multicasts is limited to two, because we have only two NOCs on
    grayskull/wormhole_b0 device." Counted as net2pipe counts them: multicasts, not
    matmuls (:func:`multicasts`); more than the target's NOC count is an error."""
    found = multicasts(ctx)
    nocs = int(ctx.target.facts["nocs"])
    if ctx.op is None or len(found) <= nocs:
        return
    listed = ", ".join(f"{name} ({direction})" for name, direction, _, _ in found)
    _, _, s, sub = found[nocs]
    yield ctx.finding(
        f"{len(found)} input multicasts on grid_size {list(ctx.op.grid_size)}: {listed}; at most {nocs} "
        f"({ctx.target.name} has {nocs} NOCs)",
        s,
        sub,
        True,
    )
