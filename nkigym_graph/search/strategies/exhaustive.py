"""``exhaustive``: breadth-first over single-match successors until the state budget
is used up or no state has an unexplored successor. Finds the best program of the
explored space; meant for small programs (the space grows combinatorially).
``batch=True`` explores, per transform, its whole batch and its fixpoint instead."""

from __future__ import annotations

from collections import deque

from nkigym_graph.search.session import Session


def run(session: Session, batch: bool = False) -> None:
    """Explore level by level; ``batch=True`` uses one batch per transform instead."""
    queue = deque([session.root])
    while queue and not session.exhausted:
        state = queue.popleft()
        pending = session.successors(state, batch) + (session.successors(state, batch, 1) if batch else [])
        while pending and not session.exhausted:
            room = max(1, session.budget - len(session.graph))
            chunk, pending = pending[:room], pending[room:]
            known = len(session.graph)
            queue.extend(c for c in session.expand(state, chunk) if c.order >= known)
        session.drop(state)
