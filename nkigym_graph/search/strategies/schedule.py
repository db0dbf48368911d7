"""``schedule``: the program's structure first, then its kernel schedule.

1. **Structure.** Each rewrite transform that saturates (``data_reuse``,
   ``operand_merge``, ...) is run to its fixpoint, in turn, until none changes the
   program: the tiles grow to the hardware's limits and every load is shared. Each
   fixpoint is one step of the path (a verified state), taken whatever it costs: the
   schedule is what makes the result fit and run fast.
2. **Schedule.** Coordinate descent over the choices (the transforms that do not
   saturate: ``rfactor``, ``loop_order``, ``block_size``, ``inner_order``,
   ``buffer_count``, and any a plugin adds): in turn, every alternative a choice offers
   in the current state is priced, and the best is taken if it ranks better -- or, for
   a schedule choice (``ScheduleTransform``) in the first round, always: a schedule's
   parts pay off together, not one by one. Rounds repeat until one improves nothing,
   ``rounds`` have run or the budget is used; the result is the best state seen
   (scheduled or not).

Every state is priced by the cost model; a schedule step leaves the statements as they
are, so it needs no numeric check, and ``rfactor`` states are checked like any rewrite.
"""

from __future__ import annotations

from nkigym_graph.scheduling.choice import ScheduleTransform
from nkigym_graph.search.derive import edit_based
from nkigym_graph.search.session import Session
from nkigym_graph.search.state import State


def run(session: Session, rounds: int = 4) -> None:
    """Saturate the structure, then improve the schedule choice by choice."""
    current = _structure(session, session.root)
    choices = [t for t in session.transforms if not t.saturates]
    for round_number in range(rounds):
        improved = False
        for transform in choices:
            if session.exhausted:
                return
            children = session.expand(current, list(session.successors_of(current, transform, "single")))
            if not children:
                continue
            best = min(children, key=lambda s: s.key)
            if best.cost.rank < current.cost.rank:
                current, improved = best, True
            elif round_number == 0 and isinstance(transform, ScheduleTransform):
                current = best
        if not improved:
            return


def _structure(session: Session, state: State) -> State:
    rewrites = [t for t in session.transforms if t.saturates and edit_based(t)]
    changed = True
    while changed and not session.exhausted:
        changed = False
        for transform in rewrites:
            fixpoints = [c for c in session.successors_of(state, transform, "batch") if c.saturate]
            if fixpoints:
                (state,) = session.expand(state, fixpoints[:1])
                changed = True
    return state
