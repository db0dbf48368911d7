"""The walk to the fixpoint of all the transforms together, for strategies that stop
when no single transform pays.

The walk is ``saturate``'s: each transform in turn to its own fixpoint, until a whole
pass changes nothing. Transforms that pay only together (a softmax's reductions merged
along the row, then its element-wise tail merged to match) are reached that way, where
each alone ranks worse. Every program on the walk is a state, priced and verified::

    stuck (no single transform's batch or fixpoint improves)
    stuck -> reduction_merge* -> operand_merge* -> dead_code* -> ...   (the walk)
    the best state of the walk, if it ranks better than stuck
"""

from __future__ import annotations

from nkigym_graph.search.session import Session
from nkigym_graph.search.state import State


def joint_fixpoint(session: Session, start: State) -> State | None:
    """The best state on the walk from ``start`` to the fixpoint of all the transforms
    together (see the module docstring), if it ranks better than ``start``; else None.
    The walk stops early when the budget is used up."""
    state = best = start
    changed = True
    while changed and not session.exhausted:
        changed = False
        # a choice that does not saturate (a schedule choice) has no fixpoint: its
        # alternatives cycle, and the walk never ended (duplicates use no budget)
        for transform in (t for t in session.transforms if t.saturates):
            if session.exhausted:
                break
            fixpoint = [c for c in session.successors_of(state, transform, "batch") if c.saturate]
            if not fixpoint:  # no match left (or a transform that cannot batch: left alone)
                continue
            (child,) = session.expand(state, fixpoint)
            if child.hash == state.hash:
                continue
            if state is not start and state is not best:
                session.drop(state)
            state, changed = child, True
            if child.key < best.key:
                best = child
    return best if best.cost.rank < start.cost.rank else None
