"""``random``: seeded random exploration with depth-uniform sampling.

The frontier holds states with untried successors, grouped by depth. Each expansion
picks a depth uniformly among those present, a state at that depth, a transform among
those that may still have untried matches there (a transform is analysed on a state
only when first picked), and one of its untried matches, all with the search's seeded
generator: deeper programs are reached as often as shallow ones however many shallow
states exist. New states at depth >= ``min_depth`` are collected; the search stops
when ``budget`` states are collected, the frontier is empty or the time is up. Expansions are drawn
``round_size`` at a time and evaluated together (the same rounds with or without an
executor, so the same result).
"""

from __future__ import annotations

from nkigym_graph.search.derive import Candidate
from nkigym_graph.search.errors import SearchError
from nkigym_graph.search.session import Session
from nkigym_graph.search.state import State

Untried = list[list[int] | None]
"""Per transform: indices of its untried candidates (None: not analysed yet)."""


def _pick(session: Session, state: State, slots: Untried) -> Candidate | None:
    """An untried candidate of ``state`` (None if it has none left)."""
    rng = session.rng
    while True:
        open_slots = [i for i, todo in enumerate(slots) if todo is None or todo]
        if not open_slots:
            return None
        which = rng.choice(open_slots)
        transform = session.transforms[which]
        options = session.successors_of(state, transform, "single")
        todo = slots[which]
        if todo is None:
            todo = slots[which] = list(range(len(options)))
            if not todo:
                continue
        at = rng.randrange(len(todo))
        todo[at], todo[-1] = todo[-1], todo[at]
        return options[todo.pop()]


def run(session: Session, min_depth: int = 0, max_depth: int | None = None, round_size: int = 8) -> None:
    """Collect ``session.budget`` distinct states at depth >= ``min_depth``; states at
    ``max_depth`` (when given) are collected but not expanded."""
    if max_depth is not None and min_depth > max_depth:
        raise SearchError(
            f"random option min_depth={min_depth} is deeper than max_depth={max_depth}: "
            "no state could be collected"
        )
    # the root is expanded unless max_depth is 0 (states at max_depth are not expanded)
    frontier: dict[int, list[State]] = {0: [session.root]} if max_depth != 0 else {}
    untried: dict[str, Untried] = {}
    if min_depth <= 0:
        session.collected.append(session.root.hash)
    rng = session.rng
    while len(session.collected) < session.budget and frontier and not session.out_of_time:
        picks: list[tuple[State, Candidate]] = []
        finished: list[State] = []
        while frontier and len(picks) < min(round_size, session.budget - len(session.collected)):
            depth = rng.choice(sorted(frontier))
            state = rng.choice(frontier[depth])
            slots = untried.setdefault(state.hash, [None] * len(session.transforms))
            picked = _pick(session, state, slots)
            if picked is not None:
                picks.append((state, picked))
            if all(todo == [] for todo in slots):
                frontier[depth].remove(state)
                if not frontier[depth]:
                    del frontier[depth]
                del untried[state.hash]
                finished.append(state)
        known = len(session.graph)
        added: set[str] = set()
        for child in session.expand_pairs(picks):
            if child.order < known or child.hash in added:
                continue  # known before this round, or reached twice in it
            added.add(child.hash)
            if max_depth is None or child.depth < max_depth:
                frontier.setdefault(child.depth, []).append(child)
            if child.depth >= min_depth and len(session.collected) < session.budget:
                session.collected.append(child.hash)
        for state in finished:
            session.drop(state)  # its successors are all derived: neither program nor analysis is needed
