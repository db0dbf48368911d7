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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple


class Task(NamedTuple):
    """One unit of work on ``engine`` (empty: no engine; it only waits for its dependencies)."""

    engine: str
    seconds: float
    deps: tuple[int, ...]
    """Indices of earlier tasks that must finish first."""


@dataclass(frozen=True)
class Schedule:
    """The outcome: makespan, busy time per engine and each task's finish time."""

    seconds: float
    busy: Mapping[str, float]
    finish: tuple[float, ...]


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
