"""Schedule shape checks. (A matmul/reduce ending its schedule is general.7.)"""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, FusedContext
from nkigym_graph.buda.rules.registry import fused_rule


@fused_rule("schedule.non_empty", "a fused op has schedules, and each schedule has sub-ops")
def schedules_not_empty(ctx: FusedContext) -> Iterator[Finding]:
    """Backend checks: "Must have schedules in tt_fused_op_info" and "Must have
    scheduled_ops in tt_schedule_info"."""
    if not ctx.fused.schedules:
        yield ctx.finding("fused op has no schedules")
    for s, schedule in enumerate(ctx.fused.schedules):
        if not schedule:
            yield ctx.finding("schedule has no sub-ops", s)


@fused_rule("schedule.output_last", "the fused op's output is written once, by its last sub-op")
def output_written_last(ctx: FusedContext) -> Iterator[Finding]:
    """Backend structure: the last sub-op of the last schedule is the one (and only one)
    writing ``output``. (A fused op without sub-ops is schedule.non_empty.)"""
    steps = list(ctx.steps())
    if not steps:
        return
    writers = [(s, sub) for s, _, sub in steps if sub.output == "output"]
    s_last, _, last = steps[-1]
    if last.output != "output":
        yield ctx.finding(f"the last sub-op writes {last.output}, not output", s_last, last)
    for s, sub in writers:
        if sub is not last:
            yield ctx.finding("writes output but is not the last sub-op of the last schedule", s, sub)
