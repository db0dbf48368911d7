"""Replaying a search path from the root.

``replay(root, path)`` applies the ``(transform name, match)`` pairs of
``SearchResult.path`` in order. Consecutive matches found in the same program (equal
``program_hash``) were applied as one batch and are applied together again. The
result has the canonical hash of the search's ``best``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import groupby

from nkigym_graph.driver import get_transform
from nkigym_graph.errors import NkigymError
from nkigym_graph.program import Program
from nkigym_graph.search.derive import derive
from nkigym_graph.search.errors import SearchError
from nkigym_graph.search.state import Step
from nkigym_graph.transform import Match, Transform


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
    path: Sequence[tuple[str, Match]],
    transforms: Mapping[str, Transform] | Sequence[Transform] | None = None,
) -> Program:
    """The program ``path`` leads to from ``root`` (see the module docstring).

    ``transforms`` supplies transform instances that are not registered plugins.
    """
    given = dict(transforms) if isinstance(transforms, Mapping) else {t.name: t for t in transforms or ()}
    program = root
    for number, step in enumerate(path_steps(path), start=1):
        found_in = step.matches[0].program_hash
        if found_in and found_in != program.canonical_hash:
            raise SearchError(
                f"replay step {number} ({step}): its matches were found in program {found_in[:12]}, "
                f"but the replay is at {program.canonical_hash[:12]}"
            )
        transform = given.get(step.transform) or get_transform(step.transform)
        try:
            program, applied = derive(program, transform, step.matches)
        except NkigymError as err:
            raise SearchError(f"replay step {number} ({step}) failed: {err}") from err
        if len(applied[0]) != len(step.matches):
            raise SearchError(f"replay step {number} ({step}): the batch no longer applies as a whole")
    return program
