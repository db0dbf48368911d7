"""``greedy``: from the root, move to the best successor while it ranks strictly better
(feasible before infeasible, then modeled time, then fewer statements).

With ``batch=True`` (default) a state's successors are, per transform, one batch
(every non-conflicting match of one analysis, applied at once), so big programs make
progress in a few steps. When none improves, the search tries each transform run to
its fixpoint (which may cross worse states), then backs off to the more and more local
matches of each batch (a whole batch may overflow on-chip memory where local matches
fit); see ``Session.successors``. After an improvement it continues at the level that
gave it: coarser levels that did not pay are not priced again (on a large program each
candidate costs seconds). ``batch=False`` considers every single match.

When nothing improves at any level, the search walks to the fixpoint of all the
transforms together and continues from the best state of the walk if it ranks better
(``nkigym_graph.search.strategies.fixpoint``); else it stops.
"""

from __future__ import annotations

from nkigym_graph.search.session import Session
from nkigym_graph.search.strategies.fixpoint import joint_fixpoint


def run(session: Session, batch: bool = True) -> None:
    """Descend until no successor improves the cost rank or the budget is used up."""
    current = session.root
    level = 0
    while not session.exhausted:
        found, used = session.next_successors(current, batch, level)
        if not found:
            better = joint_fixpoint(session, current) if batch else None
            if better is None:
                return
            current, level = better, 0
            continue
        children = session.expand(current, found)
        best = min(children, key=lambda s: s.key)
        for child in children:
            if child is not best:
                session.drop(child)
        if best.cost.rank < current.cost.rank:
            session.drop(current)
            current, level = best, used
        else:
            session.drop(best)
            level = used + 1
