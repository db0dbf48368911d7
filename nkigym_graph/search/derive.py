"""Successor candidates of a program and deriving the successor.

A candidate is a transform with the matches to apply: a single match, or (in batch
mode) every non-conflicting match of one analysis, applied in one rebuild as
``saturate`` does. In batch mode each transform also offers a *saturating* candidate:
its batches repeated until it has no match left (the transform's own fixpoint), so a
greedy step can cross states that are worse on their own. Batches are offered only
for transforms whose ``rewrite`` is the edit-based one of
``nkigym_graph.rewriting.transform.Transform``; other transforms offer their matches one at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, overload

from nkigym_graph.errors import TransformError
from nkigym_graph.ir.program import Program
from nkigym_graph.plugin.manager import notify_rewritten
from nkigym_graph.plugin.transforms import apply, matches_of
from nkigym_graph.rewriting.rewrite import apply_edits, select_non_conflicting
from nkigym_graph.rewriting.transform import Match, Transform

MAX_SATURATING_BATCHES = 256
"""A saturating candidate stops after this many batches (a transform that never ends)."""

Batches = tuple[tuple[Match, ...], ...]


class Candidate(NamedTuple):
    """A successor to derive: ``transform`` applied to ``matches`` of one program, then
    (if ``saturate``) further batches of the same transform until none is left."""

    transform: Transform
    matches: tuple[Match, ...]
    saturate: bool = False


def edit_based(transform: Transform) -> bool:
    """Whether ``transform`` rewrites by applying its matches' edits (so batches apply)."""
    return getattr(type(transform), "rewrite", None) is Transform.rewrite


def _batch(program: Program, transform: Transform) -> tuple[Match, ...]:
    analyze = getattr(transform, "analyze_batch", transform.analyze)
    return tuple(select_non_conflicting(analyze(program)))


def span(program: Program, match: Match) -> int:
    """How many statements apart (in ``program``'s order) the statements of ``match`` are."""
    if not match.nodes:
        return 0
    positions = [program.position(node) for node in match.nodes]
    return max(positions) - min(positions)


def _prefix(program: Program, matches: Sequence[Match], halvings: int) -> tuple[Match, ...]:
    return tuple(matches[: -(-len(matches) // 2**halvings)])


def _local(program: Program, matches: Sequence[Match], halvings: int) -> tuple[Match, ...]:
    limit = max(span(program, m) for m in matches) / 2**halvings
    return tuple(m for m in matches if span(program, m) <= limit)


def backoff(program: Program, matches: Sequence[Match], halvings: int) -> list[tuple[Match, ...]]:
    """Parts of a batch to try when the whole does not pay: its first ``1 / 2**halvings``
    (analysis order groups matches by tensor and position) and its matches spanning at
    most ``1 / 2**halvings`` of the largest span (statements far apart keep tiles live
    long). Each part is offered when non-empty, new, and smaller than one halving less;
    ``halvings=0`` gives the whole batch."""
    if not matches:
        return []
    if halvings == 0:
        return [tuple(matches)]
    parts: list[tuple[Match, ...]] = []
    for part_of in (_prefix, _local):
        part = part_of(program, matches, halvings)
        if part and len(part) < len(part_of(program, matches, halvings - 1)) and part not in parts:
            parts.append(part)
    return parts


MODES = ("single", "batch", "fine")


class SingleCandidates(Sequence[Candidate]):
    """Each match of an analysis alone, built on access (matches may be lazy)."""

    __slots__ = ("matches", "transform")

    def __init__(self, transform: Transform, matches: Sequence[Match]) -> None:
        self.transform = transform
        self.matches = matches

    def __len__(self) -> int:
        return len(self.matches)

    @overload
    def __getitem__(self, index: int) -> Candidate: ...

    @overload
    def __getitem__(self, index: slice) -> list[Candidate]: ...

    def __getitem__(self, index: int | slice) -> Candidate | list[Candidate]:
        if isinstance(index, slice):
            return [Candidate(self.transform, (m,)) for m in self.matches[index]]
        return Candidate(self.transform, (self.matches[index],))


def candidates_of(program: Program, transform: Transform, mode: str) -> Sequence[Candidate]:
    """The successors ``transform`` offers in ``mode``: ``single``, each match alone;
    ``batch``, one batch of ``analyze_batch`` (coarse matches, when the transform has
    them) and the transform's fixpoint; ``fine``, one batch of ``analyze``'s matches.
    A transform that cannot batch offers its single matches in every mode. Analyses
    are cached per snapshot and updated along derivations (``nkigym_graph.rewriting.analysis_cache``)."""
    if mode == "single" or not edit_based(transform):
        return SingleCandidates(transform, matches_of(program, transform))
    if mode == "fine":
        chosen = tuple(select_non_conflicting(matches_of(program, transform)))
        return [Candidate(transform, chosen)] if chosen else []
    chosen = _batch(program, transform)
    return [Candidate(transform, chosen), Candidate(transform, chosen, saturate=True)] if chosen else []


def candidates(program: Program, transforms: Sequence[Transform], mode: str = "single") -> list[Candidate]:
    """The successors of ``program``: ``candidates_of`` every transform, in order."""
    return [c for transform in transforms for c in candidates_of(program, transform, mode)]


def apply_batch(
    program: Program, transform: Transform, matches: Sequence[Match]
) -> tuple[Program, tuple[Match, ...]]:
    """The program ``matches`` (found in ``program``) lead to, and the matches applied.

    A batch whose combined edits interfere falls back to its first match, as
    ``saturate`` does. Raises ``TransformError`` when the rewrite fails.
    """
    if len(matches) == 1:
        return apply(program, transform, matches[0]), tuple(matches)
    try:
        result = apply_edits(program, [m.edit for m in matches], transform=transform.name)
    except TransformError:
        return apply(program, transform, matches[0]), (matches[0],)
    notify_rewritten(transform.name, program, result)
    return result, tuple(matches)


def derive(
    program: Program,
    transform: Transform,
    matches: Sequence[Match],
    saturate: bool = False,
    first: tuple[Program, tuple[Match, ...]] | None = None,
) -> tuple[Program, Batches]:
    """The program a candidate leads to and the batches it applied (see the module
    docstring). ``first``: what ``apply_batch(program, transform, matches)`` gave, when
    it is known (a saturating candidate starts with the batch of its plain twin)."""
    program, applied = apply_batch(program, transform, matches) if first is None else first
    batches = [applied]
    while saturate and len(batches) < MAX_SATURATING_BATCHES:
        more = _batch(program, transform)
        if not more:
            break
        program, applied = apply_batch(program, transform, more)
        batches.append(applied)
    return program, tuple(batches)
