"""A program's schedule laid out as the array solver takes it (``Layout``), kept per
run and patched, not laid out again, for a derived program.

Per statement, its tasks in schedule order are its inserted tasks (``evictions_of``:
DMA latency, PSUM evictions), then its own (``Spec``); its own task waits for the
statements it has edges from and for its inserted tasks, an inserted task for the
statements in its ``deps``, and each task for the one before it on its engine queue.

Tasks are numbered queue by queue, each queue's tasks in schedule order
(``nkigym_graph.cost.critical_path``). A task's place in the schedule is a *key*,
``rank * PLACES + place``, from its statement's rank (``Program.order_key``: kept by
every program derived from the one that numbered the statements) and its place among
the statement's tasks, so the keys of the statements an edit leaves alone stay what
they were. ``derive`` gives a derived program's layout from its parent's: when each
rewritten statement keeps the queues and the number of its tasks (the usual edit), a
copy of the parent's arrays with the rewritten columns overwritten and the removed
statements' tasks left as *ghosts* (no seconds, waiting only for the task before them
on their queue: they finish when it does, bit for bit, so every other finish time is
what it would be without them); else the kept tasks and the new ones merged by key
(ghosts dropped). A layout is never changed once made: a derived one shares the
arrays it does not change.

>>> layout = derive(EMPTY, {0: Spec(1, 2.0, (), ()), 1: Spec(2, 1.0, (0,), ((0, 0.5, (0,)),))},
...                 (), lambda node: node)
>>> solved, timed = schedule(layout, ["", "dma", "tensor"])
>>> timed.seconds, dict(timed.busy), solved.finish.tolist()
(3.5, {'dma': 2.0, 'tensor': 1.0}, [2.5, 2.0, 3.5])
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from nkigym_graph.cost import critical_path

PLACES = 16
"""Keys per statement: its inserted tasks take places ``0 ..``, its own task the last."""
LOOP_BELOW = 1000
"""Tasks below which a schedule is run by the plain loop: on small graphs numpy's
fixed cost per array operation outweighs the Python loop."""
UNKNOWN = -1
"""The hint of a task not scheduled yet: the schedule guesses it from the last finish
times of its predecessors."""
_QUEUE_SHIFT = 48
"""Bits of a key below its queue in the merge order (queue, key)."""


class Spec(NamedTuple):
    """The tasks of one statement."""

    queue: int
    """Its own task's engine queue (``PriceTable.queue_of``; 0: none)."""
    seconds: float
    sources: tuple[int, ...]
    """The statements (ids) its own task waits for."""
    inserted: tuple[tuple[int, float, tuple[int, ...]], ...]
    """Tasks queued before it: ``(queue, seconds, statements waited for)``."""


class Layout(NamedTuple):
    """The tasks of a program, numbered queue by queue (read only)."""

    seconds: np.ndarray
    """``[task]``."""
    preds: np.ndarray
    """``[row, task]``: row 0 the task before it on its queue, then the tasks it waits
    for (-1: none)."""
    key: np.ndarray
    """``[task]``: its place in the schedule (ascending along each queue)."""
    queue: np.ndarray
    """``[task]``: its engine queue (ascending)."""
    live: np.ndarray | None
    """``[task]``: not a ghost (None: no ghosts)."""
    own: np.ndarray
    """``[id]``: a statement's own task (-1: none)."""
    extra: np.ndarray
    """``[place, id]``: its inserted tasks (-1: none)."""
    hint: np.ndarray
    """``[task]``: the row of ``preds`` it waits on longest in the last schedule (int8;
    a rewritten task's guessed from the last finish times, ``UNKNOWN`` for a new task)."""
    finish: np.ndarray
    """``[task]``: when it finished in the last schedule (0.0 if rewritten since)."""


def _frozen(*arrays: np.ndarray) -> None:
    for array in arrays:
        array.flags.writeable = False


def _empty() -> Layout:
    layout = Layout(
        np.zeros(0),
        np.full((1, 0), -1, dtype=np.int32),
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.int16),
        None,
        np.full(0, -1, dtype=np.int32),
        np.full((1, 0), -1, dtype=np.int32),
        np.zeros(0, dtype=np.int8),
        np.zeros(0),
    )
    _frozen(*(a for a in layout if a is not None))
    return layout


EMPTY = _empty()
"""The layout of no statements (``derive`` it to lay a program out)."""


def derive(
    layout: Layout, specs: Mapping[int, Spec], removed: Collection[int], rank: Callable[[int], int]
) -> Layout:
    """``layout`` with the tasks of ``removed`` statements gone and those of ``specs``
    (ids, new or rewritten) as given; ``rank``: a statement's place in program order."""
    tasks = _in_place(layout, specs)
    if tasks is not None:
        return _overwritten(layout, specs, removed, tasks)
    return _merged(layout, added_of(specs), removed, rank)


def _in_place(layout: Layout, specs: Mapping[int, Spec]) -> list[list[int]] | None:
    """Per statement of ``specs``, its tasks in ``layout`` (inserted ones, then its own),
    if each has as many on the same queues and its rows of ``preds`` room for its
    edges (else None)."""
    own, extra, rows = layout.own, layout.extra, layout.preds.shape[0]
    places = extra.shape[0]
    if not specs:
        return []
    nodes = np.fromiter(specs, dtype=np.int64, count=len(specs))
    if int(nodes.max()) >= len(own):
        return None
    wanted = []
    for spec in specs.values():
        count = len(spec.inserted)
        if count > places or 1 + len(spec.sources) + count > rows:
            return None
        if any(1 + len(deps) > rows for _, _, deps in spec.inserted):
            return None
        wanted.append([engine for engine, _, _ in spec.inserted] + [-1] * (places - count) + [spec.queue])
    found = np.vstack((extra[:, nodes], own[nodes][None]))  # [place, statement], own task last
    queues = np.where(found >= 0, layout.queue.take(found), -1)
    if not np.array_equal(queues, np.array(wanted, dtype=np.int64).T):
        return None
    return [[task for task in column if task >= 0] for column in found.T.tolist()]


def _overwritten(
    layout: Layout, specs: Mapping[int, Spec], removed: Collection[int], tasks: list[list[int]]
) -> Layout:
    """``layout`` with the tasks of ``specs`` (``tasks``: per statement, inserted ones
    then its own) rewritten in a copy and those of ``removed`` statements made ghosts."""
    seconds, preds, hint = layout.seconds.copy(), layout.preds.copy(), layout.hint.copy()
    own, extra = layout.own, layout.extra
    live = layout.live
    if removed:
        gone = np.array(sorted(removed), dtype=np.int64)
        dead = np.concatenate((own[gone], extra[:, gone].ravel()))
        dead = dead[dead >= 0]
        live = np.ones(len(seconds), dtype=bool) if live is None else live.copy()
        live[dead] = False
        seconds[dead] = 0.0
        preds[1:, dead] = -1
        hint[dead] = 0
        _frozen(live)
    numbers: list[int] = []
    costs: list[float] = []
    waits: list[tuple[int, ...]] = []  # statements waited for
    for spec, theirs in zip(specs.values(), tasks, strict=True):
        numbers += theirs
        costs += [cost for _, cost, _ in spec.inserted]
        costs.append(spec.seconds)
        waits += [deps for _, _, deps in spec.inserted]
        waits.append(spec.sources)
    flat = [node for found in waits for node in found]
    mapped = own[flat].tolist() if flat else []
    columns = []
    at = 0
    for spec, theirs in zip(specs.values(), tasks, strict=True):
        for found in (*(deps for _, _, deps in spec.inserted), spec.sources):
            columns.append(mapped[at : at + len(found)])
            at += len(found)
        columns[-1] += theirs[:-1]  # its own task waits for its inserted tasks
    width = preds.shape[0] - 1
    if numbers:
        cells = np.array([column + [-1] * (width - len(column)) for column in columns], dtype=np.int32)
        preds[1:, numbers] = cells.T
        seconds[numbers] = costs
        hint[numbers] = _guessed(layout.finish, preds[:, numbers])
    _frozen(seconds, preds, hint)
    return layout._replace(seconds=seconds, preds=preds, live=live, hint=hint)


class Added(NamedTuple):
    """New tasks, flat: the statements' own tasks, then their inserted tasks (each
    statement's in place order, statements in the order of ``nodes``)."""

    nodes: np.ndarray
    """``[statement]``: ids."""
    queue: np.ndarray
    """``[task]``."""
    seconds: np.ndarray
    """``[task]``."""
    owner: np.ndarray
    """``[inserted task]``: its statement (an index into ``nodes``)."""
    lengths: np.ndarray
    """``[task]``: how many statements it waits for."""
    waits: np.ndarray
    """The statements (ids) each task waits for, task after task."""


def added_of(specs: Mapping[int, Spec]) -> Added:
    """The tasks of ``specs`` as ``Added``."""
    listed = list(specs.values())
    counts = [len(spec.inserted) for spec in listed]
    inserted = [task for spec in listed for task in spec.inserted]
    waits = [spec.sources for spec in listed] + [deps for _, _, deps in inserted]
    lengths = np.fromiter(map(len, waits), dtype=np.int64, count=len(waits))
    return Added(
        np.fromiter(specs, dtype=np.int64, count=len(specs)),
        np.array([spec.queue for spec in listed] + [queue for queue, _, _ in inserted], dtype=np.int64),
        np.array([spec.seconds for spec in listed] + [cost for _, cost, _ in inserted], dtype=np.float64),
        np.repeat(np.arange(len(listed)), counts),
        lengths,
        np.fromiter((node for found in waits for node in found), dtype=np.int64, count=int(lengths.sum())),
    )


def laid_out(added: Added, rank: Callable[[int], int]) -> Layout:
    """The layout of a program's statements (``added``: all of them)."""
    return _merged(EMPTY, added, (), rank)


def _merged(layout: Layout, added: Added, removed: Collection[int], rank: Callable[[int], int]) -> Layout:
    """The kept tasks of ``layout`` (not ghosts, not of ``removed`` or ``added``'s
    statements) and the ``added`` tasks, merged in (queue, key) order and numbered afresh."""
    nodes, owner, lengths = added.nodes, added.owner, added.lengths
    statements = len(nodes)
    counts = np.bincount(owner, minlength=statements)
    size = max(len(layout.own), int(nodes.max(initial=-1)) + 1)
    places = max(layout.extra.shape[0], int(counts.max(initial=0)))
    assert places < PLACES, f"at most {PLACES - 1} tasks are inserted before a statement"
    drop = np.zeros(len(layout.seconds), dtype=bool) if layout.live is None else ~layout.live
    old = np.concatenate((np.fromiter(removed, dtype=np.int64, count=len(removed)), nodes))
    old = old[old < len(layout.own)]
    if len(old):
        theirs = np.concatenate((layout.own[old], layout.extra[:, old].ravel()))
        drop[theirs[theirs >= 0]] = True
    kept = np.flatnonzero(~drop)

    ranks = np.fromiter(map(rank, nodes.tolist()), dtype=np.int64, count=statements)
    place = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    new_key = np.concatenate((ranks * PLACES + PLACES - 1, ranks[owner] * PLACES + place))
    new_queue = added.queue
    new_merge = (new_queue << _QUEUE_SHIFT) | new_key
    by_merge = np.argsort(new_merge, kind="stable")
    kept_merge = (layout.queue[kept].astype(np.int64) << _QUEUE_SHIFT) | layout.key[kept]
    sorted_merge = new_merge[by_merge]
    new_place = np.empty(len(new_queue), dtype=np.int64)  # of each added task
    new_place[by_merge] = np.searchsorted(kept_merge, sorted_merge) + np.arange(len(new_queue))
    kept_place = np.arange(len(kept)) + np.searchsorted(sorted_merge, kept_merge)
    total = len(kept) + len(new_queue)

    width = max(layout.preds.shape[0], 1 + int((lengths[:statements] + counts).max(initial=0)))
    width = max(width, 1 + int(lengths.max(initial=0)))
    number = np.full(len(layout.seconds) + 1, -1, dtype=np.int32)  # the last entry: -1 stays -1
    number[kept] = kept_place
    own = np.full(size, -1, dtype=np.int32)
    own[: len(layout.own)] = number[layout.own]
    own[nodes] = new_place[:statements]
    extra = np.full((places, size), -1, dtype=np.int32)
    extra[: layout.extra.shape[0], : len(layout.own)] = number[layout.extra]
    extra[place, nodes[owner]] = new_place[statements:]

    seconds = np.empty(total)
    seconds[kept_place] = layout.seconds[kept]
    seconds[new_place] = added.seconds
    key = np.empty(total, dtype=np.int64)
    key[kept_place] = layout.key[kept]
    key[new_place] = new_key
    queue = np.empty(total, dtype=np.int16)
    queue[kept_place] = layout.queue[kept]
    queue[new_place] = new_queue
    assert width <= np.iinfo(np.int8).max, "hints are int8"
    hint = np.full(total, UNKNOWN, dtype=np.int8)
    hint[kept_place] = layout.hint[kept]
    finish = np.zeros(total)
    finish[kept_place] = layout.finish[kept]
    preds = np.full((width, total), -1, dtype=np.int32)
    preds[1 : layout.preds.shape[0], kept_place] = number[layout.preds[1:, kept]]

    # the rows of the new tasks: the statements each waits for (their own tasks), then
    # for a statement's own task, its inserted tasks
    task = np.repeat(np.arange(len(lengths)), lengths)
    row = 1 + np.arange(len(added.waits)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    preds[row, new_place[task]] = own[added.waits]
    preds[1 + lengths[owner] + place, new_place[owner]] = new_place[statements:]
    preds[0] = _previous(queue)
    out = Layout(seconds, preds, key, queue, None, own, extra, hint, finish)
    _frozen(*(a for a in out if a is not None))
    return out


def _previous(queue: np.ndarray) -> np.ndarray:
    """Row 0 of ``preds``: the task before each on its queue (-1: the first, and every
    task of no engine, queue 0)."""
    prev = np.arange(-1, len(queue) - 1, dtype=np.int32)
    if len(queue):
        prev[0] = -1
        prev[1:][queue[1:] != queue[:-1]] = -1
        prev[queue == 0] = -1
    return prev


def _guessed(finish: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Per column of ``preds``, the row whose task finished last (``finish``, -1: none)."""
    return np.argmax(np.where(columns >= 0, finish.take(columns), 0.0), axis=0)


class Timed(NamedTuple):
    """What the schedule of a program gives its report."""

    seconds: float
    """The makespan."""
    busy: Mapping[str, float]
    """Busy seconds per engine, in the order of each engine's first task."""


def schedule(layout: Layout, engines: Sequence[str]) -> tuple[Layout, Timed]:
    """The layout with the finish times and critical predecessors of its schedule, and
    what the schedule gives the report: solved with array operations from the hints
    (those unknown guessed from the last finish times of the predecessors), or by the
    loop for a small graph (``LOOP_BELOW``)."""
    seconds, preds, key = layout.seconds, layout.preds, layout.key
    tasks = len(seconds)
    if tasks < LOOP_BELOW:
        finish = critical_path.run(preds, seconds, np.argsort(key, kind="stable").tolist())
        hint = critical_path.critical(preds, finish)
    else:
        hint = layout.hint
        unknown = np.flatnonzero(hint < 0)
        if len(unknown):
            hint = hint.copy()
            hint[unknown] = _guessed(layout.finish, preds[:, unknown])
        finish, hint = critical_path.solve(seconds, preds, hint, key)
    hint = np.asarray(hint, dtype=np.int8)
    _frozen(finish, hint)
    timed = Timed(float(finish.max()) if tasks else 0.0, _busy(layout, engines))
    return layout._replace(hint=hint, finish=finish), timed


def _busy(layout: Layout, engines: Sequence[str]) -> Mapping[str, float]:
    """Per engine, the sum of its tasks' seconds added in schedule order (as the list
    scheduler adds them; a ghost adds 0.0), engines in the order of their first task
    (not a ghost)."""
    queue, seconds, key, live = layout.queue, layout.seconds, layout.key, layout.live
    bounds = np.flatnonzero(np.diff(queue)) + 1
    starts = np.concatenate(([0], bounds)).tolist()
    stops = np.concatenate((bounds, [len(queue)])).tolist()
    found = []
    for start, stop in zip(starts, stops, strict=True):
        if stop <= start or not queue[start]:
            continue
        first = start
        if live is not None:
            first = start + int(np.argmax(live[start:stop]))
            if not live[first]:
                continue
        total = float(np.add.accumulate(seconds[start:stop])[-1])
        found.append((int(key[first]), engines[int(queue[start])], total))
    return MappingProxyType({name: total for _, name, total in sorted(found)})
