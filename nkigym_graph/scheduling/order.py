"""The order a kernel runs a program's statements in, from its schedule's loops.

Every statement sits somewhere along the axes it touches (its box, ``ProgramAxes.box``).
Its *key* is the block it falls in along each axis of ``schedule.order`` (outermost
first; an axis without a block size is blocked by its tile, ``nkigym_graph.scheduling.loops``),
then its start along each axis of ``schedule.inner``: sorting by key nests the
block loops in that order and the tiles of a block in the inner order. A statement
that does not touch an axis takes the position of the statements it is tied to: a
load (nothing of the program feeds it) that of its first reader, anything else that of
its last producer -- a store runs after the last K step of the tile it stores, a load
just before its first use. The order is a topological sort by key (Kahn's algorithm,
smallest key first, program order breaking ties), so dependencies always hold.
Statements are named by their ids throughout.

For ``order=N,K,M blocks=N:512,K:1024,M:512 inner=K,M`` over a 2048^3 matmul: per N
block, per K block, per M block, every K tile of the block with, inside, its 4 M tiles.

**Running ahead** (``ahead=M``, software pipelining of the M loop): a statement of M
block ``b + 1`` that does not touch the next loop's axis (it runs once before that loop:
the load of a row block, its on-chip transposes and their evictions, its row
statistics) takes the key of block ``b`` instead. If it feeds the Tensor Engine (a
Tensor Engine op, or something one reads through hoisted statements), it goes to the next
loop's first iteration, where its tiles interleave with the block's own (a transpose of
K tile ``k`` of the next rows right after the matmul of K tile ``k``); the rest goes to
the next loop's last iteration, so it does not hold up the feeders' evictions on its
engine. For ``rmsnorm(x) @ w`` with ``order=M,N,K ahead=M``::

    without                                   with ahead=M
    M block b: load x_b, transposes of x_b,   M block b, N block 0: matmul k of (b, 0),
      their evictions, sum of squares of x_b;   transpose k of x_{b+1}, its eviction, ...
      N block n: the matmuls of (b, n)        N block 1, 2: the matmuls of (b, n)
                                              N block 3: the matmuls of (b, 3),
                                                sum of squares of x_{b+1}

so the Tensor Engine never waits for a block's transposes to be evicted.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from types import MappingProxyType

from nkigym_graph.ir.axes import program_axes
from nkigym_graph.ir.memo import memo
from nkigym_graph.ir.program import STATEMENTS_KEY, Program
from nkigym_graph.ir.schedule import Schedule, ScheduleError
from nkigym_graph.ir.schedule_fit import require_ahead
from nkigym_graph.scheduling.loops import loop_axes

Key = tuple[int, ...]
UNPLACED = -1
"""The position along an axis of a statement with nothing to inherit it from (first)."""
FED_ENGINE = "tensor"
"""The engine whose feeders run ahead first (``Op.engine``)."""


def statement_keys(program: Program, schedule: Schedule) -> dict[int, Key]:
    """The sort key of every statement, by id (see the module docstring)."""
    columns = (*schedule.order, *schedule.inner)
    for axis in schedule.ahead:  # also without an order: ahead=M alone is not ignored
        require_ahead(schedule, axis)
    if not columns:
        return dict.fromkeys(program.ids, ())
    placed = placements(program)
    missing = sorted(set(columns) - set(placed))
    if missing:
        raise ScheduleError(
            f"the kernel program has no axis {', '.join(missing)} (its axes: {', '.join(placed)})"
        )
    tiles = loop_axes(program)
    outer = [
        [_block(start, schedule.block(a) or tiles.get(a)) for start in placed[a]] for a in schedule.order
    ]
    inner = [placed[a] for a in schedule.inner]
    keys = {node: tuple(column[at] for column in (*outer, *inner)) for at, node in enumerate(program.ids)}
    for axis in schedule.ahead:
        keys = _run_ahead(program, schedule, keys, axis)
    return keys


def _run_ahead(program: Program, schedule: Schedule, keys: dict[int, Key], axis: str) -> dict[int, Key]:
    """``keys`` with the statements hoisted out of the loop after ``axis``' moved one
    ``axis`` block earlier (see the module docstring)."""
    require_ahead(schedule, axis)
    at = schedule.order.index(axis)
    moved = [node for node, key in keys.items() if key[at] > 0 and key[at + 1] == UNPLACED]
    if not moved:
        return keys
    last = max(key[at + 1] for key in keys.values())
    feeders = _feeders(program, set(moved))
    out = dict(keys)
    for node in moved:
        key = keys[node]
        out[node] = (*key[:at], key[at] - 1, 0 if node in feeders else last, *key[at + 2 :])
    return out


def _feeders(program: Program, hoisted: set[int]) -> set[int]:
    """The ``hoisted`` statements that are Tensor Engine ops or that one reads, directly
    or through other hoisted statements."""
    fed = {node for node, stmt in program.items() if stmt.op.engine == FED_ENGINE}
    found: set[int] = set()
    stack = list(fed)
    while stack:
        node = stack.pop()
        for pred in program.pred_of(node):
            if pred in hoisted and pred not in found:
                found.add(pred)
                stack.append(pred)
    return found | (fed & hoisted)


def run_ahead_axes(program: Program, schedule: Schedule) -> tuple[str, ...]:
    """The loops of ``schedule.order`` that running ahead would change (each has a later
    block with statements hoisted out of the next loop)."""
    if len(schedule.order) < 2:
        return ()
    keys = statement_keys(program, schedule.replace(ahead=()))
    return tuple(
        axis
        for at, axis in enumerate(schedule.order[:-1])
        if any(key[at] > 0 and key[at + 1] == UNPLACED for key in keys.values())
    )


def placements(program: Program) -> Mapping[str, list[int]]:
    """Every statement's start along every axis (per position in program order),
    inherited where it does not touch the axis (computed once per list of statements)."""
    return memo(program, (STATEMENTS_KEY, "placements"), _placements)


def _placements(program: Program) -> Mapping[str, list[int]]:
    axes = program_axes(program)
    names = axes.names
    where: dict[int, list[int | None]] = {}
    for node in program.ids:
        box = axes.box(node)
        where[node] = [box[a][0] if a in box else None for a in names]
    sources = []
    data_in = program.incoming[0]
    for node in program.ids:  # forward: inherit from the last producer
        producers = [src for src, _ in data_in[node]]
        if not producers:
            sources.append(node)
            continue
        row = where[node]
        for i, value in enumerate(row):
            if value is None:
                found = [where[p][i] for p in producers if where[p][i] is not None]
                row[i] = max(found) if found else None  # type: ignore[type-var]
    readers = _readers(program)
    for node in reversed(sources):  # backward: a load takes its first reader's place
        row = where[node]
        for i, value in enumerate(row):
            if value is None:
                found = [where[r][i] for r in readers.get(node, ()) if where[r][i] is not None]
                row[i] = min(found) if found else None  # type: ignore[type-var]
    return MappingProxyType(
        {a: [UNPLACED if row[i] is None else row[i] for row in where.values()] for i, a in enumerate(names)}  # type: ignore[misc]
    )


def _block(start: int, size: int | None) -> int:
    if start < 0 or size is None:
        return start if start < 0 else 0
    return start // size


def _readers(program: Program) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for node, incoming in program.incoming[0].items():
        for src, _ in incoming:
            out.setdefault(src, []).append(node)
    return out


def schedule_order(program: Program, schedule: Schedule) -> list[int]:
    """The statements of ``program`` in the order ``schedule`` runs them."""
    keys = statement_keys(program, schedule)
    return keyed_topological_order(program, keys)


def keyed_topological_order(program: Program, keys: Mapping[int, Key]) -> list[int]:
    """A topological order of ``program`` (ids) taking the smallest ``(key, program
    order)`` ready."""
    n = len(program)
    rank = program.order_key
    pending: dict[int, int] = {}
    successors: dict[int, list[int]] = {node: [] for node in program.ids}
    for node in program.ids:
        preds = program.pred_of(node)
        pending[node] = len(preds)
        for src in preds:
            successors[src].append(node)
    ready = [(keys[node], rank(node), node) for node in program.ids if pending[node] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, _, node = heapq.heappop(ready)
        order.append(node)
        for nxt in successors[node]:
            pending[nxt] -= 1
            if pending[nxt] == 0:
                heapq.heappush(ready, (keys[nxt], rank(nxt), nxt))
    assert len(order) == n, "a program's dependencies are acyclic"
    return order
