"""Intermediate buffer life-cycle checks of the backend (``verify_intermed_buffers``).

A buffer becomes active when a sub-op writes it and inactive when a sub-op pops it
(``pop`` or ``pop_last``); pops are applied before the sub-op's own write, so a sub-op
may read, pop and rewrite the same buffer in place.
"""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, FusedContext
from nkigym_graph.buda.model import SubOp
from nkigym_graph.buda.rules.registry import fused_rule

Event = tuple[str, int, SubOp, str]


def _events(ctx: FusedContext) -> Iterator[Event]:
    """``(kind, schedule, sub-op, buffer)`` for each misuse: ``read``/``pop`` of an inactive
    buffer, ``rewrite`` of an active one, ``left`` active at the end."""
    active: dict[str, tuple[int, SubOp]] = {}
    for s, _, sub in ctx.steps():
        for name in sub.inputs:
            if name.startswith("intermed") and name not in active:
                yield "read", s, sub, name
        for name in sub.popped:
            if name.startswith("intermed") and active.pop(name, None) is None:
                yield "pop", s, sub, name
        if sub.output.startswith("intermed"):
            if sub.output in active:
                yield "rewrite", s, sub, sub.output
            active[sub.output] = (s, sub)
    for name, (s, sub) in active.items():
        yield "left", s, sub, name


@fused_rule("intermed.write_before_read", "an intermediate is written before it is read or popped")
def written_before_read(ctx: FusedContext) -> Iterator[Finding]:
    """Backend check: "Buffer has to be active before being used!" and "Buffer has to
    produced before it's being poped!" """
    for kind, s, sub, name in _events(ctx):
        if kind == "read":
            yield ctx.finding(
                f"reads {name}, which holds no value (never written, or already popped)", s, sub
            )
        elif kind == "pop":
            yield ctx.finding(f"pops {name}, which holds no value", s, sub)


@fused_rule("intermed.pop_before_rewrite", "an intermediate is popped before it is written again")
def popped_before_rewrite(ctx: FusedContext) -> Iterator[Finding]:
    """Backend check: "Buffer has to be poped before being produced again!" """
    for kind, s, sub, name in _events(ctx):
        if kind == "rewrite":
            yield ctx.finding(f"writes {name}, which still holds a value that was not popped", s, sub)


@fused_rule("intermed.popped_at_end", "every intermediate is popped by the end of the fused op")
def popped_at_end(ctx: FusedContext) -> Iterator[Finding]:
    """Backend check: "Intermed{} buffer produced at schedule index: {}, wasn't poped by the
    end of the {} op" """
    for kind, s, sub, name in _events(ctx):
        if kind == "left":
            yield ctx.finding(f"writes {name}, which is never popped", s, sub)
