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
smallest key first, program position breaking ties), so dependencies always hold.

For ``order=N,K,M blocks=N:512,K:1024,M:512 inner=K,M`` over a 2048^3 matmul: per N
block, per K block, per M block, every K tile of the block with, inside, its 4 M tiles.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from nkigym_graph.ir.axes import program_axes
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.schedule import Schedule
from nkigym_graph.scheduling.loops import loop_axes

Key = tuple[int, ...]
UNPLACED = -1
"""The position along an axis of a statement with nothing to inherit it from (first)."""


def statement_keys(program: Program, schedule: Schedule) -> list[Key]:
    """The sort key of every statement (see the module docstring)."""
    axes = program_axes(program)
    columns = (*schedule.order, *schedule.inner)
    if not columns:
        return [()] * len(program)
    names = tuple(dict.fromkeys(columns))
    where: list[list[int | None]] = []
    for node in range(len(program)):
        box = axes.box(node)
        where.append([box[a][0] if a in box else None for a in names])
    sources = []
    for node in range(len(program)):  # forward: inherit from the last producer
        producers = [src for src, _ in program.incoming[0][node]]
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
    index = {a: i for i, a in enumerate(names)}
    tiles = loop_axes(program)
    sizes = [schedule.block(a) or tiles.get(a) for a in schedule.order]
    keys = []
    for row in where:
        filled = [UNPLACED if v is None else v for v in row]
        outer = tuple(_block(filled[index[a]], size) for a, size in zip(schedule.order, sizes, strict=True))
        keys.append(outer + tuple(filled[index[a]] for a in schedule.inner))
    return keys


def _block(start: int, size: int | None) -> int:
    if start < 0 or size is None:
        return start if start < 0 else 0
    return start // size


def _readers(program: Program) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for node, incoming in enumerate(program.incoming[0]):
        for src, _ in incoming:
            out.setdefault(src, []).append(node)
    return out


def schedule_order(program: Program, schedule: Schedule) -> list[int]:
    """The statements of ``program`` in the order ``schedule`` runs them."""
    keys = statement_keys(program, schedule)
    return keyed_topological_order(program, keys)


def keyed_topological_order(program: Program, keys: Sequence[Key]) -> list[int]:
    """A topological order of ``program`` taking the smallest ``(key, position)`` ready."""
    n = len(program)
    pending = [0] * n
    successors: list[list[int]] = [[] for _ in range(n)]
    for node in range(n):
        preds = program.pred_of(node)
        pending[node] = len(preds)
        for src in preds:
            successors[src].append(node)
    ready = [(keys[node], node) for node in range(n) if pending[node] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, node = heapq.heappop(ready)
        order.append(node)
        for nxt in successors[node]:
            pending[nxt] -= 1
            if pending[nxt] == 0:
                heapq.heappush(ready, (keys[nxt], nxt))
    assert len(order) == n, "a program's dependencies are acyclic"
    return order
