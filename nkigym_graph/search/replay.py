"""Replaying a search path from the root.

``replay(root, path)`` applies the ``(transform name, match)`` pairs of
``SearchResult.path`` in order. Consecutive matches found in the same program (equal
``program_hash``) were applied as one batch and are applied together again. The
result has the canonical hash of the search's ``best``. A hand-written path may name
matches by index instead: ``[("data_reuse", 0)]`` applies the first match of
``data_reuse`` in the program reached so far.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from typing import cast

from nkigym_graph.errors import NkigymError, PluginError
from nkigym_graph.ir.arguments import describe, require_type
from nkigym_graph.ir.program import Program
from nkigym_graph.plugin.transforms import get_transform
from nkigym_graph.rewriting.transform import Match, Transform
from nkigym_graph.search.derive import derive
from nkigym_graph.search.errors import SearchError
from nkigym_graph.search.state import Step


def path_steps(path: Sequence[tuple[str, Match]]) -> list[Step]:
    """Group a flat path back into steps (batches share transform and ``program_hash``)."""
    steps: list[Step] = []
    for (name, found_in), group in groupby(path, key=lambda item: (item[0], item[1].program_hash)):
        matches = tuple(m for _, m in group)
        if not found_in:  # matches that do not say where they were found apply one by one
            steps.extend(Step(name, ((m,),)) for m in matches)
        else:
            steps.append(Step(name, (matches,)))
    return steps


def flatten(steps: Sequence[Step]) -> list[tuple[str, Match]]:
    """The flat ``(transform name, match)`` path of ``steps``."""
    return [(step.transform, match) for step in steps for match in step.matches]


def replay(
    root: Program,
    path: Sequence[tuple[str, Match | int]],
    transforms: Mapping[str, Transform] | Sequence[Transform] | None = None,
) -> Program:
    """The program ``path`` leads to from ``root`` (see the module docstring).

    A path entry's second item is a ``Match`` or an index into the transform's matches
    in the program reached so far (``analyze(program, name)[index]``). ``transforms``
    supplies transform instances that are not registered plugins.
    """
    require_type(root, Program, "root", SearchError, "a Program")
    entries = _checked_path(path)
    given = _given(transforms)
    program = root
    number = 0
    for by_index, run in groupby(entries, key=lambda entry: isinstance(entry[1], int)):
        items = list(run)
        if by_index:  # each index is resolved in the program its step starts from
            for name, index in items:
                number += 1
                step = _indexed(program, _transform(name, given, number), cast(int, index), number)
                program = _replay_step(program, step, number, given)
        else:
            for step in path_steps(items):  # type: ignore[arg-type]
                number += 1
                program = _replay_step(program, step, number, given)
    return program


def _given(transforms: object) -> dict[str, Transform]:
    """``replay``'s ``transforms`` (a map by name or a list) by name."""
    if isinstance(transforms, Mapping):
        given = dict(transforms)
    elif isinstance(transforms, Iterable) and not isinstance(transforms, str):
        given = {getattr(t, "name", ""): t for t in transforms}
    else:
        given = {} if transforms is None else {"": transforms}
    if not all(isinstance(t, Transform) for t in given.values()):
        raise SearchError(f"transforms must be Transform instances, got {describe(transforms)}")
    return given


def _checked_path(path: object) -> list[tuple[str, Match | int]]:
    if isinstance(path, str | bytes) or not isinstance(path, Sequence):
        raise SearchError(f"path must be a list of (transform name, match) pairs, got {describe(path)}")
    for number, entry in enumerate(path, start=1):
        if not (isinstance(entry, tuple | list) and len(entry) == 2 and isinstance(entry[0], str)):
            raise SearchError(
                f"path entry {number} must be a (transform name, match) pair, got {describe(entry)}"
            )
        if isinstance(entry[1], bool) or not isinstance(entry[1], Match | int):
            raise SearchError(
                f"path entry {number}: the match must be a Match or an index, got {describe(entry[1])}"
            )
    return [(name, match) for name, match in path]


def _transform(name: str, given: Mapping[str, Transform], number: int) -> Transform:
    try:
        return given.get(name) or get_transform(name)
    except PluginError as err:
        raise SearchError(f"replay step {number}: {err}") from None


def _indexed(program: Program, transform: Transform, index: int, number: int) -> Step:
    """The one-match step of ``transform``'s match ``index`` in ``program``."""
    matches = transform.analyze(program)
    if not 0 <= index < len(matches):
        raise SearchError(
            f"replay step {number}: {transform.name} has {len(matches)} match(es) here, no match {index}"
        )
    return Step(transform.name, ((matches[index],),))


def _replay_step(program: Program, step: Step, number: int, given: Mapping[str, Transform]) -> Program:
    found_in = step.matches[0].program_hash
    if found_in and found_in != program.canonical_hash:
        raise SearchError(
            f"replay step {number} ({step}): its matches were found in program {found_in[:12]}, "
            f"but the replay is at {program.canonical_hash[:12]}"
        )
    transform = _transform(step.transform, given, number)
    try:
        program, applied = derive(program, transform, step.matches)
    except NkigymError as err:
        raise SearchError(f"replay step {number} ({step}) failed: {err}") from err
    if len(applied[0]) != len(step.matches):
        raise SearchError(f"replay step {number} ({step}): the batch no longer applies as a whole")
    return program
