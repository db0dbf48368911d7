"""Why statements are not a match of a set or an equal pattern, for ``explain``.

A tree pattern says it itself (``Pattern.mismatch``); a set pattern's statements may fail
its op or attribute constraints, differ in more than their ranges along an axis, not be
adjacent, or be kept apart by the op's size limit or a dependency (the rules of
``adjacency``); an equal pattern's may not be members (``EqualPattern.key``) or compute
different values.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> program = tiled_matmul(128, 128, 256)
>>> a_load, b_load = program.statements_of("load")[:2]
>>> print(set_mismatch(SetPattern("load", axis="free"), program, [a_load, b_load]))
free: they differ in more than their free ranges (the tensor they read, ...)
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from nkigym_graph.rewriting.patterns.equal import EqualPattern, _one_value
from nkigym_graph.rewriting.patterns.sets import SetPattern, adjacency
from nkigym_graph.rewriting.patterns.tree import an, attrs_mismatch

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program
    from nkigym_graph.rewriting.patterns.tree import Where


def _member_mismatch(
    program: Program, node: int, op: str | None, attrs: dict[str, object], where: Where | None
) -> str | None:
    """Why statement ``node`` fails a set or equal pattern's op, attributes or ``where``."""
    stmt = program[node]
    if op is not None and stmt.op.name != op:
        return f"statement {node} is {an(stmt.op.name)}, the pattern wants {op} statements"
    wrong = attrs_mismatch(stmt, attrs)
    if wrong is not None:
        return f"statement {node}: {wrong}"
    if where is not None and not where(program, node):
        return f"statement {node} fails the pattern's where condition"
    return None


def set_mismatch(pattern: SetPattern, program: Program, nodes: Sequence[int]) -> str:
    """Why ``nodes`` are not a pair or run of ``pattern`` (along each axis it covers)."""
    if len(set(nodes)) < 2:
        return "a set pattern matches two statements or more, got one statement"
    for node in nodes:
        wrong = _member_mismatch(program, node, pattern.op, pattern.attrs, pattern.where)
        if wrong is not None:
            return wrong
    ops = sorted({program[node].op.name for node in nodes})
    if len(ops) > 1:
        return f"different ops: {', '.join(ops)}"
    op = program[nodes[0]].op
    axes = [pattern.axis] if pattern.axis is not None else sorted(op.mergeable_axes())
    if not axes:
        return f"{op.name} statements merge along no axis"
    return "; ".join(f"{axis}: {_axis_mismatch(program, nodes, axis)}" for axis in axes)


def _axis_mismatch(program: Program, nodes: Sequence[int], axis: str) -> str:
    """Why ``nodes`` (of one op) do not merge along ``axis``."""
    merges = adjacency(program)
    signatures = [merges.signature(node, axis) for node in nodes]
    if any(sig is None for sig in signatures) or len({sig[0] for sig in signatures if sig is not None}) > 1:
        return (
            f"they differ in more than their {axis} ranges (the tensor they read, another range, "
            "an attribute or accumulation)"
        )
    coordinate = {node: sig[1] for node, sig in zip(nodes, signatures, strict=True) if sig is not None}
    ordered = sorted(nodes, key=lambda node: (coordinate[node], program.order_key(node)))
    for lower, upper in itertools.pairwise(ordered):
        if not merges.adjacent(lower, upper, axis):
            return merges.apart(lower, upper, axis)
    blocker = merges.blocker(ordered, axis)
    if blocker is not None:
        return blocker
    return "they are adjacent, but another statement of the group sits between them along it"


def equal_mismatch(pattern: EqualPattern, program: Program, nodes: Sequence[int]) -> str:
    """Why ``nodes`` are not statements ``pattern`` finds equal."""
    if len(set(nodes)) < 2:
        return "an equal pattern matches two statements or more, got one statement"
    for node in nodes:
        if pattern.key(program, node) is None:
            return _not_member(pattern, program, node)
    return (
        f"statements {list(nodes)} compute different values "
        "(their op, attributes, operands or regions differ)"
    )


def _not_member(pattern: EqualPattern, program: Program, node: int) -> str:
    """Why statement ``node`` is no member of ``pattern`` (``EqualPattern.key`` is None)."""
    wrong = _member_mismatch(program, node, pattern.op, pattern.attrs, None)
    if wrong is not None:
        return wrong
    stmt = program[node]
    if stmt.accumulate or len(stmt.writes) != 1:
        return f"statement {node} accumulates or writes more than one tile"
    var = stmt.dst.var
    info = program.variables.get(var)
    if info is None or info.external or var in program.returns or program.writers_of(var) != (node,):
        return f"statement {node} does not define a private on-chip tile of its own ({var!r})"
    for operand in stmt.reads:
        if not _one_value(program, operand.var):
            return f"statement {node} reads {operand.var!r}, which is written several times (no one value)"
    return f"statement {node} fails the pattern's where condition"
