"""Schedule shape checks. (A matmul/reduce ending its schedule is general.7.)"""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, FusedContext
from nkigym_graph.buda.rules.registry import fused_rule


@fused_rule("schedule.output_last", "the fused op's output is written once, by its last sub-op")
def output_written_last(ctx: FusedContext) -> Iterator[Finding]:
    """Backend structure: every schedule has sub-ops, and the last sub-op of the last
    schedule is the one (and only one) writing ``output``."""
    for s, schedule in enumerate(ctx.fused.schedules):
        if not schedule:
            yield ctx.finding("schedule has no sub-ops", s)
    steps = list(ctx.steps())
    if not steps:
        yield ctx.finding("fused op has no sub-ops")
        return
    writers = [(s, sub) for s, _, sub in steps if sub.output == "output"]
    s_last, _, last = steps[-1]
    if last.output != "output":
        yield ctx.finding(f"the last sub-op writes {last.output}, not output", s_last, last)
    for s, sub in writers:
        if sub is not last:
            yield ctx.finding("writes output but is not the last sub-op of the last schedule", s, sub)
