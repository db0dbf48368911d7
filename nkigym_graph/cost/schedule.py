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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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


Edges = Sequence[Sequence[tuple[int, Any]]]
"""Per statement, its incoming edges as ``(source statement, label)`` pairs."""


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
    state = _Queues(queues, engines, inserted)
    free, busy = state.free, state.busy
    finish: list[float] = []
    append = finish.append
    end = 0.0
    for queue, cost, into, after, before in zip(queues, seconds, data, order, state.inserted, strict=True):
        start = free[queue]  # the slot of "no engine" stays at 0.0
        if into:
            for d, _ in into:
                if finish[d] > start:
                    start = finish[d]
        if after:
            for d, _ in after:
                if finish[d] > start:
                    start = finish[d]
        if before is not None:
            ready = state.run(before, finish)
            if ready > start:
                start = ready
            if ready > end:
                end = ready
        done = start + cost
        if queue:
            busy[queue] += cost
            free[queue] = done
        append(done)
        if done > end:
            end = done
    return Schedule(end, state.busy_by_engine(queues), tuple(finish))


class _Queues:
    """Engine queues as list slots (0: no engine), and the tasks inserted per statement."""

    def __init__(
        self, queues: Sequence[int], engines: Sequence[str], inserted: Mapping[int, Sequence[Task]]
    ) -> None:
        assert not engines[0], "queue 0 is for statements without an engine"
        names = list(engines)
        names += [e for tasks in inserted.values() for e, _, _ in tasks if e not in names]
        self.names = names
        self.slot = {name: i for i, name in enumerate(names)}
        self.free = [0.0] * len(names)
        self.busy = [0.0] * len(names)
        self.first: dict[int, tuple[int, int]] = {}
        """Per engine slot, where its first task is in the flattened order: (statement,
        place before it), the statement's own task last."""
        self.inserted: list[Sequence[Task] | None] = [None] * len(queues)
        for node, tasks in inserted.items():
            self.inserted[node] = tasks
            for place, (engine, _, _) in enumerate(tasks):
                queue = self.slot[engine]
                self.first[queue] = min(self.first.get(queue, (node, place)), (node, place))

    def run(self, tasks: Sequence[Task], finish: list[float]) -> float:
        """Queue inserted tasks (their deps are statements already scheduled); when the
        last of them finishes."""
        free, busy = self.free, self.busy
        last = 0.0
        for engine, cost, deps in tasks:
            queue = self.slot[engine]
            start = free[queue]
            for d in deps:
                if finish[d] > start:
                    start = finish[d]
            done = start + cost
            if queue:
                busy[queue] += cost
                free[queue] = done
            if done > last:
                last = done
        return last

    def busy_by_engine(self, queues: Sequence[int]) -> MappingProxyType[str, float]:
        """Busy seconds per engine that ran a task, in the order engines were first used."""
        for queue in set(queues):
            node = queues.index(queue)
            own = (node, len(self.inserted[node] or ()))
            self.first[queue] = min(self.first.get(queue, own), own)
        used = sorted((first, queue) for queue, first in self.first.items() if queue)
        return MappingProxyType({self.names[queue]: self.busy[queue] for _, queue in used})
