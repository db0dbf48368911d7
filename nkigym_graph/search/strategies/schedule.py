"""``schedule``: the program's structure first, then its kernel schedule.

1. **Structure.** Each rewrite transform that saturates (``data_reuse``,
   ``operand_merge``, ...) is run to its fixpoint, in turn, until none changes the
   program: the tiles grow to the hardware's limits and every load is shared (a
   transform whose rewrite is more than an edit, ``scale_after_matmul``, is applied a
   match at a time). Each fixpoint is one step of the path (a verified state), taken whatever it costs: the
   schedule is what makes the result fit and run fast.
2. **Seeds.** Every alternative of the first schedule choice (``loop_order``: every
   loop nest, one block per tile) is priced; the ``width`` best are the seeds.
3. **Descent.** From each seed, coordinate descent over every choice (the transforms
   that do not saturate: ``block_size``, ``buffer_count``, ``inner_order``, ``run_ahead``,
   ``rfactor``, ``loop_order`` again, and any a plugin adds): in turn, every alternative
   a choice offers in the current state is priced, and the best is taken if it ranks
   better. A seed's descent ends when a whole round improves nothing, after ``rounds``
   rounds, or when the budget is used. The result is the best state seen.

Every state is priced by the cost model; a schedule step leaves the statements as they
are, so it needs no numeric check, and ``rfactor`` states are checked like any rewrite.
"""

from __future__ import annotations

from nkigym_graph.rewriting.transform import Transform
from nkigym_graph.search.derive import edit_based
from nkigym_graph.search.session import Session
from nkigym_graph.search.state import State


def run(session: Session, width: int = 3, rounds: int = 4) -> None:
    """Saturate the structure, seed with the best loop nests, descend from each."""
    structured = _structure(session, session.root)
    choices = [t for t in session.transforms if not t.saturates]
    if not choices or session.exhausted:
        return
    seeds = sorted(_alternatives(session, structured, choices[0]), key=lambda s: s.key)[:width]
    for seed in seeds or [structured]:
        _descend(session, seed, choices, rounds)


def _descend(session: Session, current: State, choices: list[Transform], rounds: int) -> None:
    for _ in range(rounds):
        improved = False
        for transform in choices:
            if session.exhausted:
                return
            children = _alternatives(session, current, transform)
            if children:
                best = min(children, key=lambda s: s.key)
                if best.cost.rank < current.cost.rank:
                    current, improved = best, True
        if not improved:
            return


def _alternatives(session: Session, state: State, transform: Transform) -> list[State]:
    return session.expand(state, list(session.successors_of(state, transform, "single")))


def _structure(session: Session, state: State) -> State:
    rewrites = [t for t in session.transforms if t.saturates]
    changed = True
    while changed and not session.exhausted:
        changed = False
        for transform in rewrites:
            if session.exhausted:
                break
            found = session.successors_of(state, transform, "batch")
            # a transform that rewrites more than its edits offers its matches one at a time
            fixpoints = [c for c in found if c.saturate] if edit_based(transform) else list(found[:1])
            if fixpoints:
                (state,) = session.expand(state, fixpoints[:1])
                changed = True
    return state
