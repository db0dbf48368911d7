"""``PatternTransform``: a transform written as a pattern and an edit.

A subclass sets ``name`` and ``pattern`` (a tree ``Pattern``, a ``SetPattern`` or an
``EqualPattern``) and
writes ``edit(program, found) -> Edit | None`` (usually one rewrite helper's result):

    class ReluFold(PatternTransform):
        name = "relu_fold"
        pattern = Pattern(
            "activation", Pattern("activation", op="relu"), op="relu", scale=1.0, bias=0.0, capture="outer"
        )

        def edit(self, program, found):
            return forward(program, found["outer"])

The base does the rest: it finds the matches, builds each ``Match`` with its footprint
(``nkigym_graph.rewriting.patterns.footprint``: what it reads and mentions, the
program's hash), so every match is safe to apply in a batch with the others; it
combines forwards into one match per batch, so a chain folds at once; and it updates
its analysis of a derived snapshot from what the edit touched instead of matching the
whole program again (a tree pattern rechecks ``Derivation.dirty`` and the statements up
to the pattern's depth downstream of it; a set pattern rebuilds the groups a changed
statement leaves or joins, ``sets.SetMatches``; an equal pattern regroups the statements
that changed, ``equal.EqualMatches``). Set and equal patterns give pairs to ``analyze``
(the unit a search steps through) and whole runs to saturation; where ``edit`` refuses a
run whole (a width it will not exceed), saturation takes the pairs within it instead.

``edit`` and a pattern's ``where`` conditions should look only at the matched
statements and the variables they mention (their writers and readers): those are what
the update rechecks when they change.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from nkigym_graph.errors import TransformError
from nkigym_graph.foreign_errors import where
from nkigym_graph.rewriting.analysis_cache import Analysis, LazyMatches, analysis_of
from nkigym_graph.rewriting.patterns.equal import EqualMatches, EqualPattern
from nkigym_graph.rewriting.patterns.explain import equal_mismatch, set_mismatch
from nkigym_graph.rewriting.patterns.footprint import compose_forwards, pattern_match
from nkigym_graph.rewriting.patterns.sets import SetMatches, SetPattern
from nkigym_graph.rewriting.patterns.tree import CaptureError, Found, Pattern
from nkigym_graph.rewriting.transform import Edit, Match, Transform

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program


class _Roots(NamedTuple):
    """A tree pattern's analysis: the roots of its matches, in program order."""

    roots: tuple[int, ...]


class PatternTransform(Transform):
    """Base class of transforms given by a pattern and an edit (module docstring)."""

    pattern: ClassVar[Pattern | SetPattern | EqualPattern]
    edits_every_match: ClassVar[bool] = False
    """Set this when ``edit`` never returns None for a match of a set pattern: the base
    then builds each pair match only when a search asks for it."""

    def edit(self, program: Program, found: Found) -> Edit | None:
        """The edit for one match of ``pattern`` (None: leave this one alone)."""
        raise NotImplementedError(f"{type(self).__name__} must define edit(program, found)")

    def describe(self, program: Program, found: Found) -> str:
        """A match's ``detail``: by default the matched statements' ops and nodes."""
        return ", ".join(f"{program[node].op.name} {node}" for node in found.nodes)

    # -- the Transform protocol, done once for every pattern transform -------------------
    def analyze(self, program: Program) -> list[Match]:
        return list(self.analysis(program).matches)

    def analysis(self, program: Program) -> Analysis:
        pattern = self._pattern()
        if isinstance(pattern, SetPattern):
            return self._paired(program, SetMatches.of(pattern, program))
        if isinstance(pattern, EqualPattern):
            return self._paired(program, EqualMatches.of(pattern, program))
        roots = [node for node in pattern.roots(program) if self._edit_at(program, pattern, node) is not None]
        return self._rooted(program, pattern, _Roots(tuple(roots)))

    def reanalysis(self, program: Program, previous: Analysis) -> Analysis | None:
        pattern, derivation = self._pattern(), program.derivation
        if derivation is None:
            return None
        if isinstance(previous.state, (SetMatches, EqualMatches)):
            derived = previous.state.derived(program)
            return None if derived is None else self._paired(program, derived)
        if not isinstance(pattern, Pattern) or not isinstance(previous.state, _Roots):
            return None
        removed = derivation.removed
        recheck = _downstream(program, derivation.dirty, pattern.depth - 1)
        kept = {root for root in previous.state.roots if root not in removed} - recheck
        found = {node for node in recheck if self._edit_at(program, pattern, node) is not None}
        return self._rooted(program, pattern, _Roots(tuple(program.in_order(kept | found))))

    def analyze_batch(self, program: Program) -> list[Match]:
        if isinstance(self._pattern(), Pattern):
            return compose_forwards(list(analysis_of(program, self).matches))
        analysis = analysis_of(program, self)
        grouped: SetMatches | EqualMatches = analysis.state
        matches: list[Match] = []
        refused: set[int] = set()
        for found in grouped.runs():
            edit = self._checked_edit(program, found)
            if edit is not None:
                matches.append(pattern_match(self.name, program, found, edit, self.describe(program, found)))
            elif len(found.nodes) > 2:
                refused.update(found.nodes)
        if refused:  # an edit that refuses a whole run may take parts of it: the pairs in it
            matches.extend(m for m in analysis.matches if refused.issuperset(m.nodes))
        return matches

    def explain(self, program: Program, *nodes: int) -> str:
        """Whether ``nodes`` are (part of) a match, and if not, why: the first constraint
        of the pattern that fails, or that the pattern matches but ``edit`` refused it."""
        pattern = self._pattern()
        found = self._found_with(program, pattern, nodes)
        if found is not None:
            if self._checked_edit(program, found) is None:
                return f"{self.name}: the pattern matches ({found!r}), but its edit returned None there"
            return f"match: {self.describe(program, found)}"
        return (
            f"{self.name}: statements {list(nodes)} are no match: {self._mismatch(program, pattern, nodes)}"
        )

    def _found_with(
        self, program: Program, pattern: Pattern | SetPattern | EqualPattern, nodes: tuple[int, ...]
    ) -> Found | None:
        """The pattern's match made of ``nodes``: a tree pattern's rooted at one of them
        and covering all, a set or equal pattern's pair or run of exactly them."""
        wanted = set(nodes)
        if isinstance(pattern, Pattern):
            for root in sorted(wanted, key=program.order_key, reverse=True):
                found = pattern.at(program, root)
                if found is not None and wanted <= set(found.nodes):
                    return found
            return None
        grouped: SetMatches | EqualMatches = analysis_of(program, self).state
        return next((f for f in (*grouped.pairs(), *grouped.runs()) if set(f.nodes) == wanted), None)

    def _mismatch(
        self, program: Program, pattern: Pattern | SetPattern | EqualPattern, nodes: tuple[int, ...]
    ) -> str:
        """Why ``nodes`` are no match of ``pattern`` (``_found_with`` found none)."""
        if isinstance(pattern, SetPattern):
            return set_mismatch(pattern, program, nodes)
        if isinstance(pattern, EqualPattern):
            return equal_mismatch(pattern, program, nodes)
        root = max(nodes, key=program.order_key)
        found = pattern.at(program, root)
        if found is None:
            return pattern.mismatch(program, root) or f"the pattern does not match at statement {root}"
        return f"the match rooted at statement {root} is statements {list(found.nodes)}"

    # -- building matches ----------------------------------------------------------------
    def _pattern(self) -> Pattern | SetPattern | EqualPattern:
        pattern = getattr(self, "pattern", None)
        if not isinstance(pattern, (Pattern, SetPattern, EqualPattern)):
            raise TransformError(
                f"{type(self).__name__}.pattern must be a Pattern, a SetPattern or an EqualPattern, "
                f"got {pattern!r}"
            )
        return pattern

    def _edit_at(self, program: Program, pattern: Pattern, node: int) -> tuple[Found, Edit] | None:
        found = pattern.at(program, node)
        if found is None:
            return None
        edit = self._checked_edit(program, found)
        return None if edit is None else (found, edit)

    def _checked_edit(self, program: Program, found: Found) -> Edit | None:
        try:
            edit = self.edit(program, found)
        except CaptureError as err:  # a misspelt capture name: name the transform and the line
            raise TransformError(f"{self.name}: {err}{where(err)}") from err
        if edit is not None and not isinstance(edit, Edit):
            raise TransformError(f"{self.name}: edit must return an Edit or None, got {type(edit).__name__}")
        return edit

    def _matches(self, program: Program, founds: Iterable[Found]) -> tuple[Match, ...]:
        out = []
        for found in founds:
            edit = self._checked_edit(program, found)
            if edit is not None:
                out.append(pattern_match(self.name, program, found, edit, self.describe(program, found)))
        return tuple(out)

    def _rooted(self, program: Program, pattern: Pattern, state: _Roots) -> Analysis:
        def make(node: int) -> Match:
            at = self._edit_at(program, pattern, node)
            if at is None:  # the analysis and the program disagree: a bug, never a silent skip
                raise TransformError(f"{self.name}: no match at statement {node} any more")
            found, edit = at
            return pattern_match(self.name, program, found, edit, self.describe(program, found))

        return Analysis(LazyMatches(state.roots, make), state)

    def _paired(self, program: Program, state: SetMatches | EqualMatches) -> Analysis:
        """A set or equal pattern's pair matches: built when asked for if every match has an
        edit (``edits_every_match``), else found now."""
        if not self.edits_every_match:
            return Analysis(self._matches(program, state.pairs()), state)

        def make(spec: Any) -> Match:  # a pair spec of either kind of state
            found = state.found(spec)
            edit = self._checked_edit(program, found)
            if edit is None:
                refused = ", ".join(map(str, found.nodes))
                raise TransformError(f"{self.name} sets edits_every_match but its edit refused {refused}")
            return pattern_match(self.name, program, found, edit, self.describe(program, found))

        return Analysis(LazyMatches(state.pair_specs(), make), state)


def _downstream(program: Program, nodes: Set[int], hops: int) -> set[int]:
    """``nodes`` and the statements reading their results, up to ``hops`` reads away."""
    found = set(nodes)
    frontier = found
    for _ in range(hops):
        following: set[int] = set()
        for node in frontier:
            for written in program[node].writes:
                following.update(reader for reader, _ in program.consumers_of(written.var))
        frontier = following - found
        found |= frontier
    return found
