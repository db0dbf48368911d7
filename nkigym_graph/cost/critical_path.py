"""The list schedule of a flattened task graph, solved with array operations from a
guess of each task's critical predecessor.

Tasks ``0 .. T - 1`` are numbered queue by queue (``by_queue``), each engine queue's
tasks in schedule order; ``preds[:, t]`` lists the tasks ``t`` waits for (``-1``:
padding), its row 0 the task before it on its queue (``t - 1``, or ``-1`` for the first
task of a queue and for tasks of no engine, queue 0). A task finishes at
``max(0.0, finish of its preds) + seconds[t]``: the same single float addition the list
scheduler (``nkigym_graph.cost.schedule``) does per task, so the finish times, and with
them the makespan, are those of a run from the start, bit for bit, whatever order they
are computed in.

``solve`` takes a *hint*, per task the row of ``preds`` it is guessed to wait on
longest (e.g. the critical predecessors of a similar graph: a search state's parent).
Following the hints, each engine queue splits into chains (runs of tasks that each
wait on the previous one on the queue: ranges of task numbers), whose finish times
are running sums (``np.add.accumulate``: the same left-to-right additions); chains
start after the chains their first task waits on. The result is then checked against the definition
for every task at once; where it fails, the hints are replaced by the rows the
computed times pick (policy iteration: the times only grow) and the graph is solved
again, and after that from the first wrong task on by the plain loop (``run``).

>>> order, prev = by_queue(np.array([1, 1, 2, 2]))  # dma, dma, tensor, tensor
>>> preds = np.array([prev, [-1, -1, 0, 1]])  # each tensor task reads a load
>>> seconds = np.array([2.0, 2.0, 1.0, 1.0])
>>> finish, hint = solve(seconds, preds, np.zeros(4, dtype=np.int64), order)
>>> finish.tolist(), hint.tolist(), run(preds, seconds, range(4)).tolist()
([2.0, 4.0, 3.0, 5.0], [0, 0, 1, 1], [2.0, 4.0, 3.0, 5.0])
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

REPAIRS = 8
"""Times ``solve`` follows hints at most (the second time on, those the last finish
times pick): it runs the loop once a try leaves more than half as many tasks wrong as
the one before (wrong hints in a run along a queue mend one task per try)."""
NARROW = 64
"""Chains a level must hold to be summed with array operations (a chain waits on a
chain of the level before) once ``LEVELS`` levels are done; at the first narrower level
after them, the chains left are summed one after the other (a deep, thin graph)."""
LEVELS = 16


def by_queue(queue: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tasks given in schedule order with their queues, numbered queue by queue:
    ``order[t]``, the schedule place of task ``t``, and ``prev``, row 0 of ``preds``."""
    counted = np.bincount(queue)
    queues = np.flatnonzero(counted).tolist()
    order = np.concatenate([np.flatnonzero(queue == q) for q in queues]) if queues else queue
    sizes = counted[queues]
    prev = np.arange(-1, len(order) - 1, dtype=np.int64)
    firsts = np.cumsum(sizes) - sizes
    prev[firsts] = -1
    if queues and queues[0] == 0:
        prev[: sizes[0]] = -1  # no engine: no queue
    return order, prev


def run(
    preds: np.ndarray, seconds: np.ndarray, schedule: Iterable[int], known: np.ndarray | None = None
) -> np.ndarray:
    """Every task's finish time, one task after the other in ``schedule`` order (every
    task after its preds); ``known``: the finish times of the tasks before those."""
    finish = [0.0] * (len(seconds) + 1) if known is None else [*known.tolist(), 0.0]
    rows, costs = preds.T.tolist(), seconds.tolist()  # the last entry of ``finish``: padding
    for t in schedule:
        finish[t] = max([finish[p] for p in rows[t]]) + costs[t]
    return np.array(finish[:-1], dtype=np.float64)


def critical(preds: np.ndarray, finish: np.ndarray) -> np.ndarray:
    """Per task, a row of ``preds`` naming a predecessor it waits on longest."""
    return np.argmax(np.append(finish, 0.0).take(preds), axis=0) if len(finish) else np.zeros(0, np.int64)


def solve(
    seconds: np.ndarray, preds: np.ndarray, hint: np.ndarray, order: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every task's finish time and the critical rows (the next graph's hints).
    ``order``: each task's place in schedule order (``by_queue``), or any numbers
    ascending in schedule order (distinct). If the hints are
    still wrong after the tries (``REPAIRS``), the loop runs from the first wrong task
    in schedule order on (those before it are right: they and their preds keep the rule)."""
    tasks = len(seconds)

    finish, left = np.zeros(tasks), tasks + 1
    start = int(order.min(initial=0))
    for _ in range(REPAIRS):
        padded = _follow(preds[0], _chosen(preds, hint), seconds, order)
        finish = padded[:tasks]
        gathered = padded.take(preds)
        wrong = np.maximum.reduce(gathered, axis=0) + seconds != finish
        count = int(np.count_nonzero(wrong))
        if not count:
            return finish, hint
        hint = np.argmax(gathered, axis=0)
        start = int(order[wrong].min())
        if 2 * count > left:
            break
        left = count
    schedule = np.argsort(order, kind="stable")
    later = schedule[np.searchsorted(order[schedule], start) :]
    finish = run(preds, seconds, later.tolist(), finish)
    return finish, critical(preds, finish)


def _chosen(preds: np.ndarray, hint: np.ndarray) -> np.ndarray:
    """Per task, the entry of ``preds`` its hint names (a row at a time)."""
    after = preds[0].copy()
    for row in range(1, len(preds)):
        np.copyto(after, preds[row], where=hint == row)
    return after


def _follow(prev: np.ndarray, after: np.ndarray, seconds: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The finish times if each task waits on the task ``after`` names (-1: none), chain
    by chain: level by level while levels are few or wide, then one chain after the
    other in the schedule order of their first tasks (a chain waits on an earlier task).
    One entry more than tasks: 0.0, what -1 reads. Gathers use ``take`` and masks
    ``compress``: the same elements, 2-3x faster than indexing with int32 arrays."""
    tasks = len(seconds)
    heads = ~((after == prev) & (prev >= 0))
    starts = np.flatnonzero(heads)
    lengths = np.empty_like(starts)
    lengths[:-1] = starts[1:] - starts[:-1]
    lengths[-1:] = tasks - starts[-1:]
    chain_of = np.cumsum(heads, dtype=np.int32) - 1
    source = after.take(starts)
    chains = len(starts)
    waits = np.where(source >= 0, chain_of.take(source), chains)  # ``chains``: none, always done
    done = np.zeros(chains + 1, dtype=bool)
    done[chains] = True
    finish = np.empty(tasks + 1, dtype=np.float64)
    finish[tasks] = 0.0  # what ``source == -1`` reads
    pending = np.arange(chains)
    for level in range(tasks + 1):
        if not len(pending):
            break
        ready = done.take(waits.take(pending))
        now = pending.compress(ready)
        if level >= LEVELS and len(now) < NARROW:
            _one_by_one(finish, pending[np.argsort(order[starts[pending]])], starts, lengths, source, seconds)
            break
        _accumulate(finish, finish.take(source.take(now)), starts.take(now), lengths.take(now), seconds)
        done[now] = True
        pending = pending.compress(~ready)
    return finish


def _one_by_one(
    finish: np.ndarray,
    chains: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    source: np.ndarray,
    seconds: np.ndarray,
) -> None:
    """Set the finish times of ``chains`` (in an order where each comes after the chain
    it waits on), one task after the other."""
    times, costs = finish.tolist(), seconds.tolist()
    for first, length, after in zip(
        starts[chains].tolist(), lengths[chains].tolist(), source[chains].tolist(), strict=True
    ):
        value = times[after]
        for t in range(first, first + length):
            value = value + costs[t]
            times[t] = value
    finish[:] = times


def _accumulate(
    finish: np.ndarray, begin: np.ndarray, starts: np.ndarray, lengths: np.ndarray, seconds: np.ndarray
) -> None:
    """Set the finish times of chains (tasks ``starts[i]`` to ``starts[i] + lengths[i] -
    1``, the first starting at ``begin[i]``) as running sums, chains of similar length
    together (rows of one array, padded with 0.0 after their end)."""
    single = lengths == 1
    if single.all():  # the usual level: tasks waiting on tasks of other queues
        finish[starts] = begin + seconds.take(starts)
        return
    if single.any():
        first = starts[single]
        finish[first] = begin[single] + seconds[first]
    longer = np.flatnonzero(~single)
    widths = np.frexp((lengths.take(longer) - 1).astype(np.float64))[1]  # length <= 2 ** width
    for width in sorted(set(widths.tolist())):
        group = longer[widths == width] if len(longer) > 1 else longer
        if len(group) == 1:  # one chain (e.g. a long run on one queue): slices, no table
            chain = int(group[0])
            first, length = int(starts[chain]), int(lengths[chain])
            sums = np.empty(length + 1, dtype=np.float64)
            sums[0] = begin[chain]
            sums[1:] = seconds[first : first + length]
            finish[first : first + length] = np.add.accumulate(sums)[1:]
            continue
        span = np.arange(1 << width)
        inside = span < lengths[group, None]
        members = np.minimum(starts[group, None] + span, len(seconds) - 1)
        table = np.empty((len(group), len(span) + 1), dtype=np.float64)
        table[:, 0] = begin[group]
        table[:, 1:] = np.where(inside, seconds.take(members), 0.0)
        finish[members[inside]] = np.add.accumulate(table, axis=1)[:, 1:][inside]
