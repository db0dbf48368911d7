"""Running transforms: one match (``apply``), or batches to a fixpoint (``saturate``).

``saturate`` takes each named transform in turn, applies every non-conflicting match of
one analysis in a single batch, repeats that transform until it has no match, then
moves on; it stops when a whole pass over the transforms changes nothing. On failure
it names the cause and the batches that ran before; ``check=True`` also compares every
batch's program numerically with the input (see ``saturate``).

>>> from nkigym_graph.synthetic import tiled_matmul
>>> p = saturate(tiled_matmul(256, 128, 256), ["data_reuse", "operand_merge"])
>>> len(p.statements_of("nc_matmul"))
2
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nkigym_graph.arguments import describe, require_int, require_type
from nkigym_graph.collector import collector_paused
from nkigym_graph.errors import PluginError, TransformError
from nkigym_graph.plugin_manager import lookup, notify_rewritten, registered_transforms
from nkigym_graph.program import Program
from nkigym_graph.rewrite import apply_edits, select_non_conflicting
from nkigym_graph.transform import Match, Transform

if TYPE_CHECKING:
    from nkigym_graph.search.verify import Verifier

DEFAULT_PIPELINE = ("data_reuse", "operand_merge", "reduction_merge", "dead_code")


def transforms() -> Mapping[str, Transform]:
    """Every registered transform (built-in and third-party), by name."""
    return registered_transforms()


def get_transform(name: str | Transform) -> Transform:
    """A transform by name (or pass an instance through)."""
    if isinstance(name, str):
        return lookup("transform", transforms(), name)
    return require_type(name, Transform, "transform", PluginError, "a transform name or a Transform instance")


def check_program(program: object, function: str) -> Program:
    """``program`` itself, if it is a Program."""
    if not isinstance(program, Program):
        raise TransformError(f"{function}: program must be a Program, got {describe(program)}")
    return program


def analyze(program: Program, transform: str | Transform) -> list[Match]:
    """The matches ``transform`` (a name or a Transform) finds in ``program``."""
    return get_transform(transform).analyze(check_program(program, "analyze"))


def apply(program: Program, transform: str | Transform, match: Match) -> Program:
    """Apply one match; returns a new verified snapshot."""
    require_type(program, Program, "program", TransformError, "a Program")
    t = get_transform(transform)
    require_type(match, Match, "match", TransformError, f"a Match of {t.name!r} (from analyze)")
    result = t.rewrite(program, match)
    if not isinstance(result, Program):
        raise TransformError(f"transform {t.name!r} returned {type(result).__name__}, not a Program")
    notify_rewritten(t.name, program, result)
    return result


def explain(program: Program, transform: str | Transform, *nodes: int) -> str:
    """Why statements ``nodes`` do or do not form a match of ``transform``."""
    check_program(program, "explain")
    for node in nodes:
        require_int(node, "nodes", TransformError)
        if node >= len(program):
            raise TransformError(f"nodes must be statement indexes below {len(program)}, got {node}")
    return get_transform(transform).explain(program, *nodes)


@dataclass(frozen=True)
class Batch:
    """One step of saturation: ``count`` matches of ``transform`` applied at once."""

    transform: str
    count: int
    statements_after: int


def saturate_steps(
    program: Program, names: Sequence[str | Transform] | None = None
) -> Iterator[tuple[Batch, Program]]:
    """Saturation one batch at a time (see the module docstring); the arguments are
    checked when it is called, before the first batch."""
    check_program(program, "saturate")
    if names is not None:
        require_type(names, (list, tuple), "saturate: names", TransformError, "a list of transform names")
    return _batches(program, [get_transform(n) for n in (names if names is not None else DEFAULT_PIPELINE)])


def _batches(program: Program, chosen: list[Transform]) -> Iterator[tuple[Batch, Program]]:
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
                notify_rewritten(transform.name, program, result)
                program = result
                step = Batch(transform.name, applied, len(program))
                history.append(step)
                progress = True
                yield step, program


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
    try:
        return 1, apply_edits(program, [batch[0].edit], transform=transform.name)
    except TransformError as err:
        raise _failure(history, transform.name, err) from err


def _failure(history: list[Batch], name: str, cause: Exception) -> TransformError:
    ran = ", ".join(f"{b.transform} x{b.count}" for b in history[-8:]) or "none"
    return TransformError(f"saturation failed in {name!r}: {cause}; batches before it: {ran}")


def saturate(
    program: Program, names: Sequence[str | Transform] | None = None, *, check: bool = False, seed: int = 0
) -> Program:
    """Apply the transforms (default: data_reuse, operand_merge, dead_code) to a fixpoint.

    ``check=True`` also runs every batch's program on random inputs (drawn from ``seed``)
    and compares it with ``program``, as search does (``nkigym_graph.search.verify``):
    sampled outputs after each batch, every output of the result. A difference raises
    ``TransformError`` naming the first batch that introduced it.
    """
    require_type(check, bool, "saturate: check", TransformError, "True or False")
    require_int(seed, "saturate: seed", TransformError)
    if not check:
        result = program
        for _, after in saturate_steps(program, names):
            result = after
        return result
    verifier = _verifier(program, seed)
    steps: list[tuple[Batch, Program]] = []
    for step, after in saturate_steps(program, names):
        steps.append((step, after))
        _check(verifier, steps, full=False)
    if steps and verifier.check(steps[-1][1], full=True) is not None:
        for count in range(1, len(steps) + 1):
            _check(verifier, steps[:count], full=True)
    return steps[-1][1] if steps else program


def _verifier(program: Program, seed: int) -> Verifier:
    from nkigym_graph.search.verify import Verifier, VerifySettings

    return Verifier(program, VerifySettings(seed=seed))


def _check(verifier: Verifier, steps: list[tuple[Batch, Program]], full: bool) -> None:
    """Raise if the program of the last of ``steps`` differs from the input."""
    step, program = steps[-1]
    problem = verifier.check(program, full=full)
    if problem is not None:
        raise TransformError(
            f"saturation check: batch {len(steps)} ({step.transform} x{step.count}) computes something "
            f"else than the input: {problem}"
        )
