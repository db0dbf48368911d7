"""A list scheduler: statements onto per-engine queues, respecting the DAG.

Tasks are taken in program order. Each engine is one in-order queue: a task starts
when its engine has finished the previous task it was given and every task it depends
on has finished. The modeled time is when the last task finishes: the critical path
through engines and dependencies, not the sum of the tasks, so work on different
engines overlaps.

>>> s = list_schedule([Task("dma", 2.0, ()), Task("dma", 2.0, ()), Task("tensor", 1.0, (0,)),
...                    Task("tensor", 1.0, (1, 2))])
>>> s.seconds, dict(s.busy), s.finish
(5.0, {'dma': 4.0, 'tensor': 2.0}, (2.0, 4.0, 3.0, 5.0))

``node_schedule`` is the same scheduler for a cost model's hot path: one task per
statement, given as columns (engine queue, seconds, incoming edges), plus a few tasks
inserted before some statements (e.g. a copy out of an accumulator the statement waits
for). It builds no per-task objects and gives the same numbers as ``list_schedule`` on
the equivalent task list.

>>> s = node_schedule([1, 1, 2], ["", "dma", "tensor"], [2.0, 2.0, 1.0],
...                   [(), (), ((0, "a"), (1, "b"))], [(), (), ()], {2: [Task("vector", 0.5, (1,))]})
>>> s.seconds, dict(s.busy), s.finish
(5.5, {'dma': 4.0, 'vector': 0.5, 'tensor': 1.0}, (2.0, 4.0, 5.5))

A cost model estimating many similar programs solves the same schedule with array
operations instead (``nkigym_graph.cost.critical_path``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import count
from types import MappingProxyType
from typing import Any, NamedTuple


class Task(NamedTuple):
    """One unit of work on ``engine`` (empty: no engine; it only waits for its dependencies)."""

    engine: str
    seconds: float
    deps: tuple[int, ...]
    """Indices of earlier tasks that must finish first (in ``node_schedule``: of statements)."""


@dataclass(frozen=True)
class Schedule:
    """The outcome: makespan, busy time per engine and each task's finish time."""

    seconds: float
    busy: Mapping[str, float]
    finish: tuple[float, ...]
    """Per task (``node_schedule``: per statement, the inserted tasks aside)."""


def list_schedule(tasks: Sequence[Task]) -> Schedule:
    """Schedule ``tasks`` (see the module docstring)."""
    finish: list[float] = []
    free: dict[str, float] = {}
    busy: dict[str, float] = {}
    end = 0.0
    for engine, seconds, deps in tasks:
        start = 0.0
        for d in deps:
            if finish[d] > start:
                start = finish[d]
        if engine:
            start = max(start, free.get(engine, 0.0))
            busy[engine] = busy.get(engine, 0.0) + seconds
        done = start + seconds
        if engine:
            free[engine] = done
        finish.append(done)
        if done > end:
            end = done
    return Schedule(end, MappingProxyType(busy), tuple(finish))


Edges = Sequence[Sequence[tuple[int, Any]]] | Mapping[int, Sequence[tuple[int, Any]]]
"""Per statement (by position, or by id for a program whose ids are not positions), its
incoming edges as ``(source statement, label)`` pairs."""


def node_schedule(
    queues: Sequence[int],
    engines: Sequence[str],
    seconds: Sequence[float],
    data: Edges,
    order: Edges,
    inserted: Mapping[int, Sequence[Task]],
    nodes: Sequence[int] | None = None,
) -> Schedule:
    """Schedule one task per statement: statement ``i`` runs ``seconds[i]`` on engine
    ``engines[queues[i]]`` (``engines[0]`` is ``""``: no engine) after the sources of its
    edges ``data[i]`` and ``order[i]`` (two lists, as a program keeps them; repeats are
    harmless) and after the tasks ``inserted[i]``, which are queued just before it and
    wait for the statements in their ``deps``. The same numbers as ``list_schedule`` on
    the flattened tasks. ``nodes``: the statements' ids in program order (default: their
    positions), which ``data``, ``order``, ``inserted`` and the tasks' ``deps`` name them by."""
    assert not engines[0], "queue 0 is for statements without an engine"
    assert len(queues) == len(seconds), "queues and seconds disagree on the number of statements"
    ids: Sequence[int] = range(len(queues)) if nodes is None else nodes
    names = list(dict.fromkeys([*engines, *_engines_of(inserted)]))
    slot = {name: i for i, name in enumerate(names)}
    free = [0.0] * len(names)
    busy = [0.0] * len(names)
    end = 0.0
    finish: dict[int, float] = {}
    first: dict[str, tuple[int, int]] = {}
    steps = zip(
        count(), queues, seconds, ids, map(data.__getitem__, ids), map(order.__getitem__, ids), strict=False
    )
    for at, queue, cost, node, into, after in steps:
        begin = free[queue]  # the slot of "no engine" stays at 0.0
        for d, _ in into:
            if finish[d] > begin:
                begin = finish[d]
        for d, _ in after:
            if finish[d] > begin:
                begin = finish[d]
        before = inserted.get(node)
        if before is not None:
            for place, (engine, _, _) in enumerate(before):
                first.setdefault(engine, (at, place))
            ready = _run_inserted(before, slot, free, busy, finish)
            if ready > begin:
                begin = ready
            if ready > end:
                end = ready
        first.setdefault(names[queue], (at, len(before or ())))
        done = begin + cost
        if queue:
            busy[queue] += cost
            free[queue] = done
        finish[node] = done
        if done > end:
            end = done
    used = sorted((place, name) for name, place in first.items() if name)
    return Schedule(
        end,
        MappingProxyType({name: busy[slot[name]] for _, name in used}),
        tuple(map(finish.__getitem__, ids)),
    )


def _run_inserted(
    tasks: Sequence[Task],
    slot: Mapping[str, int],
    free: list[float],
    busy: list[float],
    finish: Mapping[int, float],
) -> float:
    """Queue inserted tasks (their deps are statements already scheduled); when the last
    of them finishes."""
    last = 0.0
    for engine, cost, deps in tasks:
        queue = slot[engine]
        begin = free[queue]
        for d in deps:
            if finish[d] > begin:
                begin = finish[d]
        done = begin + cost
        if queue:
            busy[queue] += cost
            free[queue] = done
        if done > last:
            last = done
    return last


def _engines_of(inserted: Mapping[int, Sequence[Task]]) -> list[str]:
    return [engine for tasks in inserted.values() for engine, _, _ in tasks]
