"""Running transforms: one match (``apply_match``), or batches to a fixpoint
(``saturation``).

Saturation takes each transform in turn, applies every non-conflicting match of one
analysis in a single batch, repeats that transform until it has no match, then moves
on; it stops when a whole pass over the transforms changes nothing. On failure it
names the cause and the batches that ran before; ``checked`` compares every batch's
program numerically with the input. Transforms are given as objects: the functions
that take transform names (``nkigym_graph.saturate``, ``apply``, ...) are the plugin
layer's (``nkigym_graph.plugin.transforms``).

>>> from nkigym_graph import get_transform
>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> chosen = [get_transform("data_reuse"), get_transform("operand_merge")]
>>> steps = saturation(tiled_matmul(256, 128, 256), chosen)
>>> *_, (batch, last) = steps
>>> len(last.statements_of("nc_matmul")), batch.transform
(2, 'operand_merge')
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from nkigym_graph.errors import BatchFallbackWarning, TransformError
from nkigym_graph.ir.arguments import describe, require_int, require_type
from nkigym_graph.ir.collector import collector_paused
from nkigym_graph.ir.program import Program
from nkigym_graph.numeric.equivalence import Verifier, VerifySettings
from nkigym_graph.rewriting.rewrite import apply_edits, select_non_conflicting
from nkigym_graph.rewriting.transform import Match, Transform


def check_program(program: object, function: str) -> Program:
    """``program`` itself, if it is a Program."""
    if not isinstance(program, Program):
        raise TransformError(f"{function}: program must be a Program, got {describe(program)}")
    return program


def apply_match(program: Program, transform: Transform, match: Match) -> Program:
    """Apply one match of ``transform`` to ``program`` (checked to be a Program by the
    caller); returns a new verified snapshot."""
    require_type(match, Match, "match", TransformError, f"a Match of {transform.name!r} (from analyze)")
    if match.transform != transform.name:
        raise TransformError(
            f"the match is one of transform {match.transform!r}, not of {transform.name!r}: apply it with "
            f"{match.transform!r}"
        )
    result = transform.rewrite(program, match)
    if not isinstance(result, Program):
        raise TransformError(f"transform {transform.name!r} returned {type(result).__name__}, not a Program")
    return result


def check_nodes(program: Program, nodes: Iterable[object]) -> None:
    """Each of ``nodes`` is a statement id of ``program``."""
    for node in nodes:
        index = require_int(node, "nodes", TransformError)
        if index not in program:
            raise TransformError(f"nodes must be statement ids of the program (program.ids), got {node}")


@dataclass(frozen=True)
class Batch:
    """One step of saturation: ``count`` matches of ``transform`` applied at once."""

    transform: str
    count: int
    statements_after: int


def saturation(program: Program, chosen: Sequence[Transform]) -> Iterator[tuple[Batch, Program]]:
    """Saturation one batch at a time (see the module docstring): each batch and the
    program after it."""
    history: list[Batch] = []
    progress = True
    while progress:
        progress = False
        for transform in chosen:
            while True:
                with collector_paused():
                    matches = transform.analyze_batch(program)
                    if not matches:
                        break
                    if transform.batched:
                        applied, result = _apply_batch(program, transform, matches, history)
                    else:
                        applied, result = 1, _rewrite_one(program, transform, matches[0], history)
                if _unchanged(program, result):
                    raise _failure(history, transform.name, _changed_nothing(applied))
                program = result
                step = Batch(transform.name, applied, len(program))
                history.append(step)
                progress = True
                yield step, program


def _unchanged(before: Program, after: Program) -> bool:
    """Whether ``after`` holds ``before``'s statements, in its order, its schedule, target
    and parameters."""
    return after is before or (
        after.statements == before.statements
        and after.schedule == before.schedule
        and after.target is before.target
        and after.params == before.params
    )


def _changed_nothing(applied: int) -> TransformError:
    """The cause of a batch that left the program as it was: its transform would find the
    same matches again, and saturation would never end."""
    return TransformError(
        f"a batch of {applied} match(es) left the program as it was, and the transform finds them "
        "again every time: each match's edit must change the program"
    )


def _rewrite_one(program: Program, transform: Transform, match: Match, history: list[Batch]) -> Program:
    try:
        return transform.rewrite(program, match)
    except TransformError as err:
        raise _failure(history, transform.name, err) from err


def _apply_batch(
    program: Program, transform: Transform, matches: list[Match], history: list[Batch]
) -> tuple[int, Program]:
    """Apply the non-conflicting matches at once; if their edits interfere, only the first."""
    batch = select_non_conflicting(matches)
    try:
        return len(batch), apply_edits(program, [m.edit for m in batch], transform=transform.name)
    except TransformError as err:
        if len(batch) == 1:
            raise _failure(history, transform.name, err) from err
        warnings.warn(
            f"{transform.name}: a batch of {len(batch)} non-conflicting matches failed ({err}); "
            "saturation applies one match at a time instead. Check that each match states every "
            "statement it relies on (reads) and every variable it touches (mentions)",
            BatchFallbackWarning,
            stacklevel=2,
        )
    try:
        return 1, apply_edits(program, [batch[0].edit], transform=transform.name)
    except TransformError as err:
        raise _failure(history, transform.name, err) from err


def _failure(history: list[Batch], name: str, cause: Exception) -> TransformError:
    ran = ", ".join(f"{b.transform} x{b.count}" for b in history[-8:]) or "none"
    return TransformError(f"saturation failed in {name!r}: {cause}; batches before it: {ran}")


def last_program(program: Program, steps: Iterable[tuple[Batch, Program]]) -> Program:
    """The program after the last of ``steps`` (``program`` if there is none)."""
    result = program
    for _, after in steps:
        result = after
    return result


def verifier(program: Program, seed: int) -> Verifier:
    """Checks programs against ``program`` on random inputs drawn from ``seed``, as
    search does (``nkigym_graph.numeric.equivalence``)."""
    return Verifier(program, VerifySettings(seed=seed))


def checked(program: Program, verifier: Verifier, steps: Iterable[tuple[Batch, Program]]) -> Program:
    """The program after the last of ``steps``, each checked by ``verifier``: sampled
    outputs after each batch, every output of the result. A difference raises
    ``TransformError`` naming the first batch that introduced it."""
    done: list[tuple[Batch, Program]] = []
    for step, after in steps:
        done.append((step, after))
        _check(verifier, done, full=False)
    if done and verifier.check(done[-1][1], full=True) is not None:
        for count in range(1, len(done) + 1):
            _check(verifier, done[:count], full=True)
    return done[-1][1] if done else program


def _check(verifier: Verifier, steps: list[tuple[Batch, Program]], full: bool) -> None:
    """Raise if the program of the last of ``steps`` differs from the input."""
    step, program = steps[-1]
    problem = verifier.check(program, full=full)
    if problem is not None:
        raise TransformError(
            f"saturation check: batch {len(steps)} ({step.transform} x{step.count}) computes something "
            f"else than the input: {problem}"
        )
