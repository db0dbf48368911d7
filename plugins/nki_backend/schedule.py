"""The order the kernel runs the program's statements in, and where accumulators are
allocated.

Statements keep program order, except that each sinkable statement (a load) moves down
to just before the first statement that depends on it. Where a transform hoisted
loads, this gives back the regular "load, load, multiply" rhythm that loop rolling
folds, and no tile is allocated earlier than it is needed. The alternative order puts
loads shared by several statements first (a prologue); the emitter takes it when it
needs no more on-chip memory, since the rest of the kernel is then uniform.

A tile written by several statements (a PSUM accumulator) is allocated before the run
of statements that feed its first write: in ``load a; load b; acc = a.T @ b; load a';
load b'; acc += a'.T @ b'`` the allocation goes before the first load, so that every
K step looks the same.
"""

from __future__ import annotations

from collections.abc import Callable

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Statement


def statement_order(
    program: Program, sinks: Callable[[Statement], bool], hoist_shared: bool = False
) -> list[int]:
    """Program order with every sinkable statement moved to just before its first dependent.

    With ``hoist_shared``, sinkable statements read by several statements (loads that a
    transform shared between output tiles) go first instead, in program order.
    """
    pending: set[int] = set()
    order: list[int] = []

    def place(node: int) -> None:
        for pred in program.predecessors(node):  # in program order
            if pred in pending:
                pending.discard(pred)
                place(pred)
        order.append(node)

    if hoist_shared:
        order += [
            node
            for node, stmt in program.items()
            if sinks(stmt) and not program.predecessors(node) and len(program.successors(node)) > 1
        ]
    first = set(order)
    for node, stmt in program.items():
        if node in first:
            continue
        if sinks(stmt) and program.successors(node):
            pending.add(node)
        else:
            place(node)
    for node in program.in_order(pending):  # only reached by statements nothing depends on
        order.append(node)
    return order


def allocation_points(
    program: Program, order: list[int], variables: list[str], feeding_run: bool = True
) -> dict[int, list[str]]:
    """Position in ``order`` before which each of ``variables`` is allocated (see module
    docstring; without ``feeding_run``, just before its first write); variables sharing
    a position keep the order of their first writes."""
    position = {node: i for i, node in enumerate(order)}
    points: dict[int, list[str]] = {}
    firsts = sorted((min(position[w] for w in program.writers_of(v)), v) for v in variables)
    for first, var in firsts:
        feeding = {order[first]}
        start = first
        while start > 0 and feeding_run:
            prev = order[start - 1]
            if not any(succ in feeding for succ in program.successors(prev)):
                break
            feeding.add(prev)
            start -= 1
        points.setdefault(start, []).append(var)
    return points
