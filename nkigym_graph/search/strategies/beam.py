"""``beam``: keep the ``width`` best states. Each round expands every beam state at its
next level (whole batches, then fixpoints, then more and more local parts of each
batch; see ``Session.successors``) and keeps the best ``width`` of the
beam and the successors; a successor starts at the level that produced it (coarser
levels are not priced again). Stops when no beam state has candidates left or the
budget is used up. ``batch=False`` expands single matches (one level). When no beam
state has candidates left, the beam walks from its best state to the fixpoint of all
the transforms together (``nkigym_graph.search.strategies.fixpoint``) and goes on with
the best state of the walk in the beam if it ranks better.
"""

from __future__ import annotations

from nkigym_graph.search.derive import Candidate
from nkigym_graph.search.session import Session
from nkigym_graph.search.state import State
from nkigym_graph.search.strategies.fixpoint import joint_fixpoint


def run(session: Session, width: int = 4, batch: bool = True) -> None:
    """Beam search of ``width`` states."""
    beam: list[State] = [session.root]
    level: dict[str, int] = {}  # next backoff level of each state
    done: set[str] = set()  # states with no candidates left at any level
    while not session.exhausted:
        pairs: list[tuple[State, Candidate]] = []
        levels: list[int] = []
        for state in beam:
            if state.hash in done:
                continue
            found, used = session.next_successors(state, batch, level.get(state.hash, 0))
            if found:
                level[state.hash] = used + 1
                pairs.extend((state, c) for c in found)
                levels.extend([used] * len(found))
            else:
                done.add(state.hash)
        if not pairs:
            better = joint_fixpoint(session, beam[0]) if batch else None
            if better is None:
                return
            beam = sorted({s.hash: s for s in (better, *beam)}.values(), key=lambda s: s.key)[:width]
            continue
        pool = {s.hash: s for s in beam}
        for child, used in zip(session.expand_pairs(pairs), levels, strict=False):  # fewer when time is up
            pool.setdefault(child.hash, child)
            level.setdefault(child.hash, used)
        ranked = sorted(pool.values(), key=lambda s: s.key)
        for state in ranked[width:]:
            session.drop(state)
        beam = ranked[:width]
