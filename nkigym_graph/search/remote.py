"""Evaluating candidates, in this process or in an executor's workers.

``evaluate`` derives one candidate's program, and for a new state prices it with the
cost model and checks it against the root. ``evaluate_remote`` is the same work in a
worker: programs travel as ``ProgramRef`` (hash and pickled bytes, unpickled once per
worker and kept in a small cache), each worker keeps one ``Verifier`` per root so its
memo serves every task it runs, and the derived program stays in the worker (the
search rebuilds it from its parent if it ever expands that state).
"""

from __future__ import annotations

import pickle
import threading
from collections import OrderedDict
from collections.abc import Container, Sequence
from typing import NamedTuple

from nkigym_graph.cost import CostModel, CostReport
from nkigym_graph.errors import NkigymError
from nkigym_graph.ir.program import Program
from nkigym_graph.numeric.equivalence import Verifier, VerifySettings, interface_change
from nkigym_graph.plugin.calls import estimate_with
from nkigym_graph.plugin.manager import ObserverError
from nkigym_graph.rewriting.transform import Match, Transform
from nkigym_graph.search.derive import Batches, derive


class ProgramRef(NamedTuple):
    """A program by value for another process: its canonical hash and pickled bytes."""

    hash: str
    data: bytes

    @classmethod
    def of(cls, program: Program) -> ProgramRef:
        return cls(program.canonical_hash, pickle.dumps(program, protocol=pickle.HIGHEST_PROTOCOL))


class Outcome(NamedTuple):
    """What one candidate led to."""

    hash: str
    batches: Batches
    """The batches applied (a batch whose edits interfere falls back to its first match)."""
    cost: CostReport | None
    """None for a program already known (not priced again) or a failed rewrite."""
    problem: str | None
    """How the program differs from the root (None: it agrees, or was not checked)."""
    error: str | None
    """Why the rewrite failed (None: it succeeded)."""
    program: Program | None


def evaluate(
    parent: Program,
    transform: Transform,
    matches: Sequence[Match],
    saturate: bool,
    model: CostModel,
    verifier: Verifier | None,
    full: bool,
    known: Container[str] = (),
    first: tuple[Program, tuple[Match, ...]] | None = None,
) -> Outcome:
    """Derive, then (unless its hash is ``known``) price and check one candidate
    (``first``: its first batch's result, when known; see ``derive``)."""
    try:
        child, applied = derive(parent, transform, matches, saturate, first)
    except ObserverError:  # an observer plugin's bug, named by the error itself
        raise
    except Exception as err:  # a transform's own bug is reported with the state, like a refused rewrite
        return Outcome("", (tuple(matches),), None, None, _describe(err), None)
    changed = changed_parameters(parent, child)
    if changed is not None:
        return Outcome("", applied, None, None, changed, None)
    key = child.canonical_hash
    if key in known:
        return Outcome(key, applied, None, None, None, child)
    cost = estimate_with(model, child)
    problem = verifier.check(child, full) if verifier is not None else None
    return Outcome(key, applied, cost, problem, None, child)


def changed_parameters(parent: Program, child: Program) -> str | None:
    """Why ``child`` cannot be a search state of ``parent``'s search (None: it can): a
    rewrite that changes the parameters (``weight_stitch``) gives a program the root's
    inputs do not feed, so it cannot be checked against the root; one that changes the
    target leaves the hardware the search is for."""
    changed = interface_change(parent, child)
    if changed is None:
        return None
    if child.params != parent.params:
        return (
            f"{changed}; search checks every state against the root on the root's inputs, so it "
            "cannot search this transform: apply it to the search's best instead (nkigym_graph.apply)"
        )
    return f"{changed}; a search keeps to its root's target (tile for the other target to search there)"


def _describe(err: Exception) -> str:
    return str(err) if isinstance(err, NkigymError) else f"{type(err).__name__}: {err}"


_PROGRAMS: OrderedDict[str, Program] = OrderedDict()
_PROGRAM_CACHE = 4
_VERIFIERS: dict[tuple[str, VerifySettings], tuple[Verifier, threading.Lock]] = {}
_LOCK = threading.Lock()


def _load(ref: ProgramRef) -> Program:
    with _LOCK:
        found = _PROGRAMS.get(ref.hash)
        if found is not None:
            _PROGRAMS.move_to_end(ref.hash)
            return found
    program = pickle.loads(ref.data)
    with _LOCK:
        _PROGRAMS[ref.hash] = program
        while len(_PROGRAMS) > _PROGRAM_CACHE:
            _PROGRAMS.popitem(last=False)
    return program


def _verifier(root: ProgramRef, settings: VerifySettings) -> tuple[Verifier, threading.Lock]:
    key = (root.hash, settings)
    with _LOCK:
        found = _VERIFIERS.get(key)
    if found is None:
        found = (Verifier(_load(root), settings), threading.Lock())
        with _LOCK:
            _VERIFIERS.clear()  # one search at a time per worker
            _VERIFIERS[key] = found
    return found


def evaluate_remote(
    parent: ProgramRef,
    transform: Transform,
    matches: tuple[Match, ...],
    saturate: bool,
    model: CostModel,
    root: ProgramRef,
    settings: VerifySettings,
    full: bool,
) -> Outcome:
    """``evaluate`` in a worker (see the module docstring); the program is not sent back."""
    verifier, lock = _verifier(root, settings)
    program = _load(parent)
    try:
        child, applied = derive(program, transform, matches, saturate)
    except ObserverError:
        raise
    except Exception as err:
        return Outcome("", (matches,), None, None, _describe(err), None)
    changed = changed_parameters(program, child)
    if changed is not None:
        return Outcome("", applied, None, None, changed, None)
    cost = estimate_with(model, child)
    with lock:
        problem = verifier.check(child, full)
    return Outcome(child.canonical_hash, applied, cost, problem, None, None)
