"""A program's schedule as a task graph kept by statement id (``TaskGraph``): a derived
program copies its parent's and rewrites the rows of its dirty statements only, then
solves the schedule with array operations from the parent's critical predecessors
(``nkigym_graph.cost.critical_path``; the loop where they do not lead there).

Per statement, its tasks in schedule order are its inserted tasks (``evictions_of``:
DMA latency, PSUM evictions), then its own; its own task waits for the statements it
has edges from and for its inserted tasks, an inserted task for the statements in its
``deps``, and each task for the one before it on its engine queue.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from nkigym_graph.cost import Task
from nkigym_graph.cost.critical_path import by_queue, solve
from nkigym_graph.ir.program import Program


class TaskGraph(NamedTuple):
    """The tasks of a program's statements, one column per statement id (the columns
    of ids not in the program are ignored)."""

    preds: np.ndarray
    """``[slot, id]``: the statements its own task waits for (-1: padding)."""
    inserted: np.ndarray
    """``[id]``: how many tasks are inserted before it."""
    queues: np.ndarray
    """``[place, id]``: each inserted task's engine queue (``PriceTable.queue_of``)."""
    seconds: np.ndarray
    """``[place, id]``: each inserted task's seconds."""
    deps: np.ndarray
    """``[place, slot, id]``: the statements each inserted task waits for (-1: padding)."""
    hint: np.ndarray
    """``[id]``: what its own task waits on longest: 0 the task before it on its queue,
    ``k > 0`` ``preds[k - 1, id]``, ``-(j + 1)`` its inserted task ``j``."""
    inserted_hint: np.ndarray
    """``[place, id]``: what each inserted task waits on longest: 0 the task before it
    on its queue, ``k > 0`` ``deps[place, k - 1, id]`` (both: ``UNKNOWN`` for a
    statement rewritten since the last schedule)."""
    finish: np.ndarray
    """``[id]``: when its own task finished in the last schedule (as float32: only
    hints are guessed from it)."""
    inserted_finish: np.ndarray
    """``[place, id]``: when each inserted task finished in the last schedule."""


UNKNOWN = -(1 << 15)
"""The hint of a task not scheduled yet: the schedule guesses it from the last finish
times of its predecessors."""


def build(
    program: Program, inserted: Mapping[int, Sequence[Task]], queue_of: Callable[[str], int]
) -> TaskGraph:
    """The ``TaskGraph`` of ``program`` with ``inserted`` tasks (no hints yet)."""
    return derive(_sized(0, 1, 1, 1), program, inserted, queue_of, program.ids)


def derive(
    graph: TaskGraph,
    program: Program,
    inserted: Mapping[int, Sequence[Task]],
    queue_of: Callable[[str], int],
    nodes: Collection[int],
) -> TaskGraph:
    """A copy of ``graph`` with the columns of ``nodes`` (ids) as ``program`` and
    ``inserted`` have them (the other statements' edges and inserted tasks unchanged)."""
    data, order = program.incoming
    sources = {
        node: list(dict.fromkeys([src for src, _ in data[node]] + [src for src, _ in order[node]]))
        for node in nodes
    }
    tasks = {node: inserted.get(node, ()) for node in nodes}
    out = _sized(
        max(len(graph.inserted), max(nodes, default=-1) + 1),
        max([graph.preds.shape[0], *map(len, sources.values())]),
        max([graph.queues.shape[0], *map(len, tasks.values())]),
        max([graph.deps.shape[1], *(len(t.deps) for found in tasks.values() for t in found)]),
    )
    _copy(graph, out)
    preds, deps, queues, seconds = out.preds, out.deps, out.queues, out.seconds
    for node, found in sources.items():
        preds[:, node] = -1
        preds[: len(found), node] = found
        listed = tasks[node]
        out.inserted[node] = len(listed)
        deps[:, :, node] = -1
        out.hint[node] = UNKNOWN
        out.inserted_hint[:, node] = UNKNOWN
        for place, (engine, cost, waits) in enumerate(listed):
            queues[place, node] = queue_of(engine)
            seconds[place, node] = cost
            deps[place, : len(waits), node] = waits
    return out


def _sized(size: int, width: int, places: int, slots: int) -> TaskGraph:
    """An empty graph with room for ``size`` ids, ``width`` edges, ``places`` inserted
    tasks of ``slots`` deps each."""
    assert width + places < -UNKNOWN, "hints are int16"
    return TaskGraph(
        np.full((width, size), -1, dtype=np.int32),
        np.zeros(size, dtype=np.int32),
        np.zeros((places, size), dtype=np.int16),
        np.zeros((places, size), dtype=np.float64),
        np.full((places, slots, size), -1, dtype=np.int32),
        np.zeros(size, dtype=np.int16),
        np.zeros((places, size), dtype=np.int16),
        np.zeros(size, dtype=np.float32),
        np.zeros((places, size), dtype=np.float32),
    )


def _copy(graph: TaskGraph, out: TaskGraph) -> None:
    """``graph``'s entries into the (as large or larger) ``out``."""
    width, old = graph.preds.shape
    places, slots = graph.queues.shape[0], graph.deps.shape[1]
    out.preds[:width, :old] = graph.preds
    out.inserted[:old] = graph.inserted
    out.queues[:places, :old] = graph.queues
    out.seconds[:places, :old] = graph.seconds
    out.deps[:places, :slots, :old] = graph.deps
    out.hint[:old] = graph.hint
    out.inserted_hint[:places, :old] = graph.inserted_hint
    out.finish[:old] = graph.finish
    out.inserted_finish[:places, :old] = graph.inserted_finish


class Timed(NamedTuple):
    """What the schedule of a program gives its report."""

    seconds: float
    """The makespan."""
    busy: Mapping[str, float]
    """Busy seconds per engine, in the order of each engine's first task."""


def schedule(
    graph: TaskGraph, ids: np.ndarray, queue: np.ndarray, seconds: np.ndarray, engines: Sequence[str]
) -> Timed:
    """The schedule of the statements ``ids`` (in program order; their own tasks on
    ``queue``, taking ``seconds``), solved from the graph's hints, which it replaces by
    the critical predecessors found (the graph is the program's own)."""
    count = graph.inserted[ids]
    own = np.cumsum(count + 1) - 1  # schedule places
    tasks = int(own[-1]) + 1 if len(ids) else 0
    width, places, slots = graph.preds.shape[0], graph.queues.shape[0], graph.deps.shape[1]
    by_place = np.zeros(tasks, dtype=np.int16)
    by_place[own] = queue
    inserted = []
    for place in range(places):
        has = np.flatnonzero(count > place)
        where = own[has] - count[has] + place
        by_place[where] = graph.queues[place, ids[has]]
        inserted.append((has, where))
    order, prev = by_queue(by_place)
    number = np.empty(tasks, dtype=np.int32)  # the task number at each schedule place
    number[order] = np.arange(tasks)
    mine = number[own]
    at = np.full(len(graph.inserted) + 1, -1, dtype=np.int32)  # the last entry: padding
    at[ids] = mine
    preds = np.full((1 + max(width + places, slots), tasks), -1, dtype=np.int32)
    preds[0] = prev
    times = np.empty(tasks, dtype=np.float64)
    times[mine] = seconds
    hint = np.empty(tasks, dtype=np.int64)
    known = graph.hint[ids].astype(np.int64)
    hint[mine] = np.where(known >= 0, known, width - known)
    last = np.zeros(tasks + 1, dtype=np.float64)  # the last finish times (the last entry: padding)
    last[mine] = graph.finish[ids]
    for slot in range(width):
        preds[1 + slot, mine] = at[graph.preds[slot, ids]]
    placed = []
    for place, (has, where) in enumerate(inserted):
        who, numbered = ids[has], number[where]
        times[numbered] = graph.seconds[place, who]
        for slot in range(slots):
            preds[1 + slot, numbered] = at[graph.deps[place, slot, who]]
        preds[1 + width + place, mine[has]] = numbered
        hint[numbered] = graph.inserted_hint[place, who]
        last[numbered] = graph.inserted_finish[place, who]
        placed.append((who, numbered))
    unknown = np.flatnonzero((hint < 0) | (hint >= len(preds)))
    hint[unknown] = np.argmax(last[preds[:, unknown]], axis=0)
    finish, hint = solve(times, preds, hint, order)
    known = hint[mine]
    graph.hint[ids] = np.where(known <= width, known, width - known)
    graph.finish[ids] = finish[mine]
    for place, (who, numbered) in enumerate(placed):
        graph.inserted_hint[place, who] = hint[numbered]
        graph.inserted_finish[place, who] = finish[numbered]
    return Timed(float(finish.max()) if tasks else 0.0, _busy(by_place[order], times, order, engines))


def _busy(
    ranked: np.ndarray, seconds: np.ndarray, order: np.ndarray, engines: Sequence[str]
) -> Mapping[str, float]:
    """Per engine, the sum of its tasks' seconds added in schedule order (as the list
    scheduler adds them), engines in the order of their first task (tasks numbered queue
    by queue: ``ranked``, their queues; ``order``, their schedule places)."""
    bounds = np.flatnonzero(np.diff(ranked)) + 1
    starts = np.concatenate(([0], bounds)).tolist()
    stops = np.concatenate((bounds, [len(order)])).tolist()
    found = []
    for start, stop in zip(starts, stops, strict=True):
        if stop > start and ranked[start]:
            total = float(np.add.accumulate(seconds[start:stop])[-1])
            found.append((int(order[start]), engines[int(ranked[start])], total))
    return MappingProxyType({name: total for _, name, total in sorted(found)})
