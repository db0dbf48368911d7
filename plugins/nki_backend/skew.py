"""Software pipelining by one row tile: each row's store chain after the next row's statistics.

The engines run their instructions in the order the kernel issues them. In program
order a row tile's epilogue (the elementwise chain from its statistics to its store,
:func:`.columns.store_chains`) waits for those statistics, and the next row's
statistics wait behind it in the engines' queues, so the engines take turns. Skewed,
the statistics of row ``i + 1`` are issued before the epilogue of row ``i``, which by
then has its inputs::

    program order                           skewed
    s0 = tensor_reduce(x0, op="sum")        s0 = tensor_reduce(x0, op="sum")
    y0 = tensor_scalar(x0, s0)              s1 = tensor_reduce(x1, op="sum")
    output[0:128, :] = y0                   y0 = tensor_scalar(x0, s0)
    s1 = tensor_reduce(x1, op="sum")        output[0:128, :] = y0
    y1 = tensor_scalar(x1, s1)              y1 = tensor_scalar(x1, s1)
    output[128:256, :] = y1                 output[128:256, :] = y1

Each maximal run of chain statements moves past the run of other statements after it,
unless one of those writes what the chain reads or reads or writes what it writes.
The statements are the same; only their order changes.
"""

from __future__ import annotations

from nkigym_graph.ir.program import Program

from .columns import store_chains


def skew_store_chains(program: Program) -> Program:
    """``program`` with each store chain issued after the next row's other statements;
    unchanged when it has no chains."""
    chained = store_chains(program)
    if not chained:
        return program
    runs: list[tuple[bool, list[int]]] = []
    for node in program.ids:
        inside = node in chained
        if runs and runs[-1][0] == inside:
            runs[-1][1].append(node)
        else:
            runs.append((inside, [node]))
    order: list[int] = []
    pending: list[int] = []
    for inside, nodes in runs:
        if inside:
            order += pending
            pending = nodes
        elif pending and _conflict(program, nodes, pending):
            order += pending + nodes
            pending = []
        else:
            order += nodes
    order += pending
    if order == list(program.ids):
        return program
    return program.replace(statements=[program[node] for node in order])


def _conflict(program: Program, passed: list[int], moved: list[int]) -> bool:
    """Whether ``passed`` writes what ``moved`` reads, or touches what it writes."""
    read = {operand.var for node in moved for operand in program[node].reads}
    written = {program[node].dst.var for node in moved}
    return any(
        program[node].dst.var in read | written
        or any(operand.var in written for operand in program[node].reads)
        for node in passed
    )
