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

``traced_schedule`` also returns a ``Trace`` of the run (finish times, and the engine
queues saved every ``CHECKPOINT_EVERY`` statements), from which the schedule of a
program sharing the first statements resumes: only the statements from the checkpoint
before the first difference on are scheduled again, with the same float additions in
the same order, so the numbers are those of a run from the start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import count, islice
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

CHECKPOINT_EVERY = 32
"""A ``Trace`` saves the engine queues before every this many statements."""


@dataclass(frozen=True)
class Trace:
    """A ``traced_schedule`` run, kept so the schedule of a program whose first
    statements are those of this one (same tasks, edges and inserted tasks) can resume
    where they end instead of starting over: each statement's finish time, and the
    engine queues (free time and busy sum per engine, and the makespan so far) saved
    before every ``CHECKPOINT_EVERY`` statements. Resuming from a checkpoint repeats
    the same float additions in the same order, so the numbers are those of a run from
    the start."""

    names: tuple[str, ...]
    """The engine of each queue slot of the saved queues."""
    finish: Mapping[int, float]
    """Per statement (by id; never changed once the run is over)."""
    statements: int
    """How many statements the run scheduled."""
    saved: list[tuple[tuple[float, ...], tuple[float, ...], float]]
    """Before statement ``i * CHECKPOINT_EVERY``: free time and busy seconds per slot, makespan."""
    first: Mapping[str, tuple[int, int]]
    """Per engine, its first task in the flattened order: (statement position, place
    before it), the statement's own task last (it orders ``Schedule.busy``)."""

    def resume_point(self, changed: int) -> int:
        """Where a program whose statements agree with this run's before position
        ``changed`` resumes: the latest checkpoint at or before it (0: from the start)."""
        point = min(changed, self.statements - 1) // CHECKPOINT_EVERY
        return max(0, min(point, len(self.saved) - 1)) * CHECKPOINT_EVERY


def node_schedule(
    queues: Sequence[int],
    engines: Sequence[str],
    seconds: Sequence[float],
    data: Edges,
    order: Edges,
    inserted: Mapping[int, Sequence[Task]],
) -> Schedule:
    """Schedule one task per statement: statement ``i`` runs ``seconds[i]`` on engine
    ``engines[queues[i]]`` (``engines[0]`` is ``""``: no engine) after the sources of its
    edges ``data[i]`` and ``order[i]`` (two lists, as a program keeps them; repeats are
    harmless) and after the tasks ``inserted[i]``, which are queued just before it and
    wait for the statements in their ``deps``. The same numbers as ``list_schedule`` on
    the flattened tasks."""
    return traced_schedule(queues, engines, seconds, data, order, inserted)[0]


def traced_schedule(
    queues: Sequence[int],
    engines: Sequence[str],
    seconds: Sequence[float],
    data: Edges,
    order: Edges,
    inserted: Mapping[int, Sequence[Task]],
    resume: Trace | None = None,
    start: int = 0,
    nodes: Sequence[int] | None = None,
) -> tuple[Schedule, Trace]:
    """``node_schedule``, and the ``Trace`` to resume from. ``nodes``: the statements'
    ids in program order (default: their positions), which ``data``, ``order``,
    ``inserted`` and the tasks' ``deps`` name them by. With ``resume`` (the trace of a
    program whose statements before position ``start`` are these, and ``start`` one of
    its checkpoints, ``resume.resume_point``), the run starts at statement ``start``:
    ``queues``, ``seconds`` cover the statements from ``start`` on, and ``data``,
    ``order``, ``inserted`` are whole (the tasks inserted before ``start`` are the
    resumed run's)."""
    assert not engines[0], "queue 0 is for statements without an engine"
    if resume is None:
        start = 0
    assert start % CHECKPOINT_EVERY == 0
    n = start + len(queues)
    ids: Sequence[int] = range(n) if nodes is None else nodes
    names = list(
        dict.fromkeys([*engines, *(resume.names if start and resume else ()), *_engines_of(inserted)])
    )
    slot = {name: i for i, name in enumerate(names)}
    free = [0.0] * len(names)
    busy = [0.0] * len(names)
    end = 0.0
    finish: dict[int, float]
    first: dict[str, tuple[int, int]]
    if start and resume is not None:
        saved_free, saved_busy, end = resume.saved[start // CHECKPOINT_EVERY]
        for name, was_free, was_busy in zip(resume.names, saved_free, saved_busy, strict=True):
            free[slot[name]], busy[slot[name]] = was_free, was_busy
        finish = dict(resume.finish)  # the statements before ``start``; later ones are overwritten
        saved = resume.saved[: start // CHECKPOINT_EVERY]
        first = {name: at for name, at in resume.first.items() if at[0] < start}
    else:
        finish, saved, first = {}, [], {}
    later: list[int] = list(ids[start:n])
    steps = zip(
        count(start),
        queues,
        seconds,
        later,
        map(data.__getitem__, later),
        map(order.__getitem__, later),
        map(inserted.get, later),
        strict=False,
    )
    firsts: dict[str, tuple[int, int]] = {}
    scheduled = start
    for _ in range(start, n, CHECKPOINT_EVERY):
        saved.append((tuple(free), tuple(busy), end))
        for at, queue, cost, node, into, after, before in islice(steps, CHECKPOINT_EVERY):
            begin = free[queue]  # the slot of "no engine" stays at 0.0
            if into:
                for d, _ in into:
                    if finish[d] > begin:
                        begin = finish[d]
            if after:
                for d, _ in after:
                    if finish[d] > begin:
                        begin = finish[d]
            if before is not None:
                for place, (engine, _, _) in enumerate(before):
                    if engine not in firsts:
                        firsts[engine] = (at, place)
                ready = _run_inserted(before, slot, free, busy, finish)
                if ready > begin:
                    begin = ready
                if ready > end:
                    end = ready
            done = begin + cost
            if queue:
                busy[queue] += cost
                free[queue] = done
            finish[node] = done
            if done > end:
                end = done
            scheduled = at + 1
    assert scheduled == n == start + len(seconds), (
        "edges, queues and seconds disagree on the number of statements"
    )
    for name, found in _first_tasks(queues, names, inserted, later, start, firsts).items():
        first.setdefault(name, found)  # a task before ``start`` comes first
    used = sorted((place, name) for name, place in first.items() if name)
    schedule = Schedule(
        end,
        MappingProxyType({name: busy[slot[name]] for _, name in used}),
        tuple(map(finish.__getitem__, ids)),
    )
    return schedule, Trace(tuple(names), finish, n, saved, first)


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


def _first_tasks(
    queues: Sequence[int],
    names: Sequence[str],
    inserted: Mapping[int, Sequence[Task]],
    later: Sequence[int],
    start: int,
    firsts: Mapping[str, tuple[int, int]],
) -> dict[str, tuple[int, int]]:
    """Per engine, its first task from position ``start`` on (``later``: the ids from
    there): (statement position, place before it), the statement's own task after its
    inserted ones (``firsts``: the first inserted task of each engine the run met)."""
    first = dict(firsts)
    if not isinstance(queues, list):
        queues = list(queues)
    for queue in set(queues):
        at = queues.index(queue)
        own = (start + at, len(inserted.get(later[at], ())))
        first[names[queue]] = min(first.get(names[queue], own), own)
    return first
