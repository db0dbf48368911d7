"""One running search: the state graph, the verifier, the cost model, the budget, and
the operations strategies are written with.

Strategies call ``successors(state)`` (the state's candidates, analysed once) and
``expand(state, candidates)`` (the states they lead to, in candidate order: new ones
priced and verified, known ones looked up). Every new state is verified against the
root before ``expand`` returns it, so nothing unverified can be chosen; a rewrite
that fails or a program that computes something else stops the search with a
``SearchError`` naming the transform and the states.
"""

from __future__ import annotations

import random
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor

from nkigym_graph.cost import CostModel
from nkigym_graph.ir.program import Program
from nkigym_graph.numeric.equivalence import Verifier, VerifySettings
from nkigym_graph.plugin.calls import estimate_with
from nkigym_graph.rewriting.transform import Match, Transform
from nkigym_graph.search.derive import Candidate, backoff, candidates_of, derive, edit_based, span
from nkigym_graph.search.errors import SearchError
from nkigym_graph.search.executors import run_ordered, workers_of
from nkigym_graph.search.progress import Progress
from nkigym_graph.search.remote import Outcome, ProgramRef, evaluate, evaluate_remote
from nkigym_graph.search.state import State, StateGraph, Step

PROGRAM_CACHE_STATEMENTS = 250_000
"""Statements of state programs kept built (others are rebuilt from their parent)."""


class Session:
    """The mutable core of a search (see the module docstring)."""

    def __init__(
        self,
        root: Program,
        transforms: Sequence[Transform],
        model: CostModel,
        *,
        full_checks: bool,
        settings: VerifySettings,
        budget: int,
        executor: Executor | None,
        progress: Progress,
        deadline: float | None = None,
        budget_counts: str = "states",
    ) -> None:
        self.root_program = root
        self.transforms = list(transforms)
        self.by_name: Mapping[str, Transform] = {t.name: t for t in transforms}
        self.model = model
        self.full_checks = full_checks
        self.settings = settings
        self.budget = budget
        self.budget_counts = budget_counts
        """What the budget counts: ``states`` (``expand`` creates no state past it) or
        ``collected`` (the strategy counts its own)."""
        self.deadline = deadline
        """``time.perf_counter()`` after which no new work starts (None: no limit)."""
        self.timed_out = False
        self.executor = executor
        self.progress = progress
        self.rng = random.Random(settings.seed)
        self.verifier = Verifier(root, settings)
        self.root = State(root.canonical_hash, 0, estimate_with(model, root), checked="root")
        self.graph = StateGraph(self.root)
        self.best = self.root
        self.duplicates = 0
        self.verified = 0
        self.fully_verified = 0
        self.expansions = 0
        self.collected: list[str] = []
        self._programs: OrderedDict[str, Program] = OrderedDict()
        self._cached_statements = 0
        self._cache_limit = max(PROGRAM_CACHE_STATEMENTS, 3 * len(root))
        self._root_ref: ProgramRef | None = None
        self._twins: dict[tuple[str, int], tuple[tuple[Match, ...], tuple[Program, tuple[Match, ...]]]] = {}
        """Batch candidates' programs by transform and matches, for their saturating
        twins (``_evaluate``), for one state: ``_twins_of``."""
        self._twins_of = ""

    # -- programs ---------------------------------------------------------------------
    def program(self, state: State) -> Program:
        """The program of ``state`` (rebuilt from its parent if it was dropped)."""
        if state is self.root:
            return self.root_program
        found = self._programs.get(state.hash)
        if found is not None:
            self._programs.move_to_end(state.hash)
            return found
        assert state.parent is not None and state.step is not None
        parent = self.program(self.graph[state.parent])
        program = parent
        for batch in state.step.batches:
            program, _ = derive(program, self.by_name[state.step.transform], batch)
        if program.canonical_hash != state.hash:
            raise SearchError(f"rebuilding state {state.hash[:12]} gave {program.canonical_hash[:12]}")
        self._keep(state.hash, program)
        return program

    def _keep(self, key: str, program: Program) -> None:
        if key in self._programs:
            return
        self._programs[key] = program
        self._cached_statements += len(program)
        while self._cached_statements > self._cache_limit and len(self._programs) > 1:
            _, old = self._programs.popitem(last=False)
            self._cached_statements -= len(old)

    def drop(self, state: State) -> None:
        """Forget ``state``'s program and analysis (it can be rebuilt)."""
        old = self._programs.pop(state.hash, None)
        if old is not None:
            self._cached_statements -= len(old)
        state.candidates.clear()

    # -- successors -------------------------------------------------------------------
    def successors(self, state: State, batch: bool = False, level: int = 0) -> list[Candidate]:
        """The candidates of ``state`` at ``level``, every transform in order.

        Single matches have one level. In batch mode, per transform: level 0 is one batch
        of its (possibly coarse) batch matches, level 1 its fixpoint (the batches
        repeated), level 2 one batch of its fine matches, and each level after backs off
        to parts of that batch (a whole batch may overflow on-chip memory where part of
        it fits; see ``nkigym_graph.search.derive.backoff``). A transform that cannot
        batch offers its single matches at level 0.
        """
        if not batch:
            return (
                [c for t in self.transforms for c in self.successors_of(state, t, "single")]
                if level == 0
                else []
            )
        out: list[Candidate] = []
        for transform in self.transforms:
            if not edit_based(transform):
                out.extend(self.successors_of(state, transform, "single") if level == 0 else ())
            elif level < 2:
                found = self.successors_of(state, transform, "batch")
                out.extend(found[level : level + 1])
            else:
                fine = self.successors_of(state, transform, "fine")
                # the batch of level 0, where this state offered it (priced there already);
                # a state entered at a later level never analyses it
                coarse = state.candidates.get((transform.name, "batch"), ())
                for part in backoff(self.program(state), fine[0].matches if fine else (), level - 2):
                    if not coarse or part != coarse[0].matches:
                        out.append(Candidate(transform, part))
        return out

    def next_successors(self, state: State, batch: bool, level: int) -> tuple[list[Candidate], int]:
        """The candidates of the first level >= ``level`` that has any, and that level
        (no candidates and a level past the last when none is left). The last level
        depends on the fine matches, analysed only when a level past 1 is asked for
        (batch levels 0 and 1 always exist)."""
        while (batch and level <= 1) or level <= self._last_level(state, batch):
            found = self.successors(state, batch, level)
            if found:
                return found, level
            level += 1
        return [], level

    def _last_level(self, state: State, batch: bool) -> int:
        if not batch:
            return 0
        deepest = 1
        for transform in self.transforms:
            if edit_based(transform):
                fine = self.successors_of(state, transform, "fine")
                if fine:
                    program = self.program(state)
                    widest = max(len(fine[0].matches), *(span(program, m) for m in fine[0].matches), 1)
                    deepest = max(deepest, 2 + widest.bit_length())
        return deepest

    def successors_of(self, state: State, transform: Transform, mode: str = "single") -> Sequence[Candidate]:
        """The candidates ``transform`` offers at ``state`` in ``mode`` (see
        ``nkigym_graph.search.derive.candidates_of``), analysed once per state and mode."""
        key = (transform.name, mode)
        found = state.candidates.get(key)
        if found is None:
            found = state.candidates[key] = candidates_of(self.program(state), transform, mode)
        return found

    @property
    def exhausted(self) -> bool:
        """Whether the state budget or the time is used up."""
        return len(self.graph) >= self.budget or self.out_of_time

    @property
    def full(self) -> bool:
        """Whether a budget of states is used up (never for a budget of collected states)."""
        return self.budget_counts == "states" and len(self.graph) >= self.budget

    @property
    def out_of_time(self) -> bool:
        """Whether the search's time limit has passed (checked between expansions and
        between the candidates of one, so the evaluation under way finishes)."""
        if not self.timed_out and self.deadline is not None and time.perf_counter() >= self.deadline:
            self.timed_out = True
        return self.timed_out

    def expand(self, state: State, chosen: Sequence[Candidate]) -> list[State]:
        """The states ``chosen`` lead to from ``state``, in order (see the module
        docstring). When the search's time limit passes, the states of the candidates
        evaluated by then (at least the first; with an executor, whole rounds of twice as
        many candidates as it runs at once)."""
        return self.expand_pairs([(state, c) for c in chosen])

    def expand_pairs(self, pairs: Sequence[tuple[State, Candidate]]) -> list[State]:
        """``expand`` for candidates of several states, in the order given (a prefix of
        them once the time limit passes)."""
        if not pairs:
            return []
        self.expansions += len({state.hash for state, _ in pairs})
        # rounds: in this process one candidate (a known state is neither priced nor
        # checked); an executor takes them all, or with a time limit twice what it runs at once
        if self.executor is None:
            rounds = 1
        else:
            rounds = len(pairs) if self.deadline is None else 2 * workers_of(self.executor)
        children: list[State] = []
        refs: dict[str, ProgramRef] = {}
        for start in range(0, len(pairs), rounds):
            # the time is up: the candidates evaluated so far; the budget of states is used
            # up: the candidates recorded so far (the first always is)
            if children and (self.full or self.out_of_time):
                break
            chunk = pairs[start : start + rounds]
            if self.executor is None:
                outcomes = [self._evaluate(state, candidate) for state, candidate in chunk]
            else:
                outcomes = run_ordered(self.executor, evaluate_remote, self._tasks(chunk, refs))
            for (state, c), o in zip(chunk, outcomes, strict=True):
                if children and self.full:  # as in this process: no state past the budget
                    break
                children.append(self._record(state, c, o))
        self.progress.update(len(self.graph), self.duplicates, self.best.cost.seconds, self._extra())
        return children

    def _evaluate(self, state: State, candidate: Candidate) -> Outcome:
        """``evaluate`` in this process. A batch candidate's program is kept for its
        saturating twin (same matches), which starts from it instead of applying the
        batch again: the twin comes at the next level of the same state."""
        name = candidate.transform.name
        if self._twins_of != state.hash:
            self._twins.clear()
            self._twins_of = state.hash
        twin = self._twins.pop((name, id(candidate.matches)), None) if candidate.saturate else None
        outcome = evaluate(
            self.program(state),
            candidate.transform,
            candidate.matches,
            candidate.saturate,
            self.model,
            self.verifier,
            self.full_checks,
            self.graph,
            None if twin is None or twin[0] is not candidate.matches else twin[1],
        )
        if not candidate.saturate and len(candidate.matches) > 1 and outcome.program is not None:
            self._twins[(name, id(candidate.matches))] = (
                candidate.matches,
                (outcome.program, outcome.batches[0]),
            )
        return outcome

    def _tasks(self, pairs: Sequence[tuple[State, Candidate]], refs: dict[str, ProgramRef]) -> list[tuple]:
        """The executor's tasks for ``pairs``; ``refs`` keeps the programs already pickled."""
        if self._root_ref is None:
            self._root_ref = ProgramRef.of(self.root_program)
        tasks = []
        for state, c in pairs:
            ref = refs.get(state.hash)
            if ref is None:
                ref = refs[state.hash] = ProgramRef.of(self.program(state))
            tasks.append(
                (
                    ref,
                    c.transform,
                    c.matches,
                    c.saturate,
                    self.model,
                    self._root_ref,
                    self.settings,
                    self.full_checks,
                )
            )
        return tasks

    def _record(self, parent: State, candidate: Candidate, outcome: Outcome) -> State:
        name = candidate.transform.name
        if outcome.error is not None:
            raise SearchError(
                f"transform {name!r} failed on state {parent.hash[:12]} (depth {parent.depth}): "
                f"{outcome.error}"
            )
        step = Step(name, outcome.batches)
        if outcome.hash in self.graph:
            self.duplicates += 1
            self.graph.link(parent.hash, outcome.hash, step)
            return self.graph[outcome.hash]
        if outcome.problem is not None:
            raise SearchError(
                f"transform {name!r} produced a program that differs from the root: state "
                f"{outcome.hash[:12]} (depth {parent.depth + 1}), reached from state {parent.hash[:12]} "
                f"by {step}: {outcome.problem}"
            )
        assert outcome.cost is not None
        checked = "full" if self.full_checks else "sampled"
        child = State(outcome.hash, parent.depth + 1, outcome.cost, parent.hash, step, checked)
        self.graph.add(child)
        self.verified += 1
        self.fully_verified += self.full_checks
        if outcome.program is not None:
            self._keep(child.hash, outcome.program)
        if child.key < self.best.key:
            self.best = child
        return child

    def _extra(self) -> str:
        return f", {len(self.collected)} collected" if self.collected else ""

    # -- the end ----------------------------------------------------------------------
    def verify_best(self) -> None:
        """Check the best state on every output element; on a difference, find the first
        step of its path that introduced it and raise naming that transform and state."""
        best = self.best
        if best.checked in ("root", "full"):
            return
        problem = self.verifier.check(self.program(best), full=True)
        self.fully_verified += 1
        if problem is None:
            best.checked = "full"
            return
        program = self.root_program
        for number, step in enumerate(self.graph.steps_to(best.hash), start=1):
            for batch in step.batches:
                program, _ = derive(program, self.by_name[step.transform], batch)
                problem = self.verifier.check(program, full=True)
                if problem is not None:
                    raise SearchError(
                        f"transform {step.transform!r} produced a program that differs from the root "
                        f"(found by the full check of the best state): step {number} ({step}) gives state "
                        f"{program.canonical_hash[:12]}: {problem}"
                    )
        raise SearchError(f"the best state {best.hash[:12]} differs from the root: {problem}")
