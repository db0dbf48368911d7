"""Statements the kernel computes inside another statement's instruction.

NKI instructions do more than one program statement each; the emitter uses that where
the program allows:

=====================================  ==============================================
program                                kernel
=====================================  ==============================================
``e = activation(...)``,               one ``nisa.activation(dst=e, ...,
``s (+)= tensor_reduce(e, op="sum")``  reduce_op=nl.add, reduce_res=s)``: the Scalar Engine
                                       sums what it writes (a mean then divides)
``t = tensor_scalar(x, a, op=f)``,     one ``nisa.tensor_scalar(dst=u, data=x, op0=f,
``u = tensor_scalar(t, b, op=g)``      operand0=a, op1=g, operand1=b)`` (numbers or
                                       ``[P, 1]`` columns), when only ``u`` reads ``t``
``m = tensor_reduce(x, op="max")``,    one ``nisa.tensor_reduce(dst=n, ..., negate=True)``,
``n = tensor_scalar(m, -1.0, ...)``    when only ``n`` reads ``m``
``t = tensor_scalar(x, a, op=f)``,     one ``nisa.scalar_tensor_tensor(dst=u, data=x, op0=f,
``u = tensor_tensor(t, y, op=g)``      operand0=a, op1=g, operand1=y)`` on the Vector Engine
                                       (``y`` a tile or a spread row), or the two
                                       instructions as they are, whichever the engine
                                       model finishes first (:mod:`.scalar_tensor`)
``t = tensor_scalar(x, a, b)``         the same over two ``tensor_tensor`` s, ``b`` done
(two steps, fused above),              after the first: ``(x <f> a) <g> y`` then
``u = tensor_tensor(t, y, op=g)``,     ``(. <h> b) <k> z``, when ``h`` and ``g`` are the
``v = tensor_tensor(u, z, op=k)``      same ``add`` or ``multiply`` (so they commute)
``t0 = nc_transpose(e[:, 0:128])``,    ``nisa.nc_transpose`` of each into its columns
``t1 = nc_transpose(e[:, 128:256])``,  of one PSUM tile, then one ``nisa.tensor_copy``
...                                    to SBUF (a bank's worth at most): one eviction
                                       instead of one per transpose
=====================================  ==============================================

A pair fuses only when moving the later statement's work to where the earlier one
runs (or the reverse) changes nothing another statement sees: the absorbed
statement's inputs are ready, and nothing in between reads or writes what it touches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Statement

SUMS = frozenset({"sum", "mean"})
"""Reductions the Scalar Engine's reduce registers compute (a mean divides after)."""
ACTIVATIONS = frozenset({"activation", "activation_bias"})
SCALAR_OPS = frozenset({"tensor_scalar", "tensor_column"})
TENSOR_OPS = frozenset({"tensor_tensor", "tensor_row"})
"""Element-wise ops with a second tensor operand (``scalar_tensor_tensor``'s ``operand1``)."""
COMMUTING = frozenset({"add", "multiply"})
"""Ops ``o`` with ``(t o a) o y == (t o y) o a``: a column step moves past a tensor step."""


@dataclass
class Fusions:
    """Which statement's instruction does which other statement's work."""

    reduce_of: dict[int, int] = field(default_factory=dict)
    """Activation -> the row sum of its result it also computes."""
    first_of: dict[int, int] = field(default_factory=dict)
    """``tensor_scalar`` -> the ``tensor_scalar`` producing its data, done as its ``op0``."""
    negation_of: dict[int, int] = field(default_factory=dict)
    """Max reduction -> the negation of its result it also computes."""
    absorbed: set[int] = field(default_factory=set)
    """Statements emitted inside another's instruction (no group of their own)."""
    taken: set[int] = field(default_factory=set)
    """Every statement of a fusion (each takes part in one at most)."""
    runs_at: dict[int, int] = field(default_factory=dict)
    """Absorbed statement -> the statement whose instruction does its work."""
    chains: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """Last ``tensor_tensor`` of a chain -> the chain: a ``tensor_scalar`` (with its fused
    first step, one column step per tensor step) and the ``tensor_tensor`` s after it,
    lowered together where the last one runs (:mod:`.scalar_tensor`)."""
    transposes_of: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """First transpose of a group -> the group's transposes (it first), transposed into
    one PSUM tile and evicted together where the first runs."""

    def add(self, table: dict[int, int], doer: int, done: int, absorbed: int) -> None:
        """Record that ``doer``'s instruction does ``done``'s work; ``absorbed`` (one of
        the two) gets no instruction of its own."""
        table[doer] = done
        self.absorbed.add(absorbed)
        self.taken.update((doer, done))
        self.runs_at[absorbed] = done if absorbed == doer else doer


def plan_fusions(
    program: Program, order: list[int], transpose_columns: Callable[[Statement], int] | None = None
) -> Fusions:
    """The fusions of ``program`` lowered in ``order`` (see the module docstring);
    ``transpose_columns`` gives how many result columns of a transpose one PSUM tile
    holds (None: transposes are not grouped)."""
    lowered = _Order(order)
    fusions = Fusions()
    pending: dict[int, tuple[int, int]] = {}
    if transpose_columns is not None:
        _transpose_groups(program, order, fusions, transpose_columns)
    for node in order:
        stmt = program[node]
        name = stmt.op.name
        if name == "tensor_reduce" and stmt.attr("op") in SUMS:
            _sum_after_activation(program, lowered, fusions, node)
        elif name in SCALAR_OPS:
            _scalar_chain(program, lowered, fusions, node)
        elif name == "tensor_reduce" and stmt.attr("op") == "max":
            _negated_max(program, fusions, node)
        elif name in TENSOR_OPS:
            _scalar_then_tensor(program, lowered, fusions, pending, node)
    return fusions


class _Order:
    """The lowering order and each statement's position in it."""

    def __init__(self, order: list[int]) -> None:
        self.order = order
        self.position = {node: i for i, node in enumerate(order)}

    def __getitem__(self, node: int) -> int:
        return self.position[node]

    def between(self, first: int, last: int) -> list[int]:
        """The statements lowered strictly between ``first`` and ``last``."""
        return self.order[self.position[first] + 1 : self.position[last]]


def _sole_writer(program: Program, var: str) -> int | None:
    writers = program.writers_of(var)
    return writers[0] if len(writers) == 1 and not program.variables[var].external else None


def _running_between(position: _Order, fusions: Fusions, first: int, last: int) -> list[int]:
    """The statements whose work runs between ``first`` and ``last`` (an absorbed one runs
    where the statement doing it is)."""
    lo, hi = position[first], position[last]
    inside = [n for n in position.between(first, last) if n not in fusions.runs_at]
    inside += [n for n, at in fusions.runs_at.items() if lo < position[at] < hi]
    return inside


def _untouched(program: Program, order_between: Iterable[int], variables: set[str]) -> bool:
    """Whether no statement of ``order_between`` reads or writes any of ``variables``."""
    for node in order_between:
        if any(operand.var in variables for operand in program[node].operands):
            return False
    return True


def sums_activation(program: Program, node: int) -> bool:
    """Whether statement ``node`` is a row sum an activation's instruction may compute (a
    sum of the whole result of one activation), as the list-scheduled order assumes
    before the fusions of its order are planned."""
    stmt = program[node]
    if stmt.op.name != "tensor_reduce" or stmt.attr("op") not in SUMS:
        return False
    producer = _sole_writer(program, stmt.operands[0].var)
    if producer is None:
        return False
    activation = program[producer]
    return activation.op.name in ACTIVATIONS and activation.dst.slices == stmt.operands[0].slices


def _sum_after_activation(program: Program, position: _Order, fusions: Fusions, node: int) -> None:
    """``s (+)= tensor_reduce(e)`` done by the activation writing ``e`` (at its place)."""
    stmt = program[node]
    data = stmt.operands[0]
    producer = _sole_writer(program, data.var)
    if producer is None or position[producer] > position[node] or fusions.taken & {producer, node}:
        return
    activation = program[producer]
    if activation.op.name not in ACTIVATIONS or activation.accumulate or activation.dst.slices != data.slices:
        return
    ready = (position[fusions.runs_at.get(p, p)] for p in program.pred_of(node) if p != producer)
    if any(at > position[producer] for at in ready):
        return  # the sum's accumulator is not ready where the activation runs
    if not _untouched(program, _running_between(position, fusions, producer, node), {stmt.dst.var}):
        return
    fusions.add(fusions.reduce_of, producer, node, absorbed=node)


def _scalar_chain(program: Program, position: _Order, fusions: Fusions, node: int) -> None:
    """``u = tensor_scalar(t, b)`` with ``t = tensor_scalar(x, a)`` read only here: one instruction."""
    stmt = program[node]
    data = stmt.operands[0]
    producer = _sole_writer(program, data.var)
    if producer is None or stmt.accumulate or fusions.taken & {producer, node}:
        return
    first = program[producer]
    if first.op.name not in SCALAR_OPS or first.accumulate or first.dst.slices != data.slices:
        return
    if program.consumers_of(data.var) != ((node, 0),):
        return
    reads = {first.operands[p].var for p in first.op.read_positions}
    if not _untouched_writes(program, _running_between(position, fusions, producer, node), reads):
        return
    fusions.add(fusions.first_of, node, producer, absorbed=producer)


def _scalar_then_tensor(
    program: Program, position: _Order, fusions: Fusions, pending: dict[int, tuple[int, int]], node: int
) -> None:
    """``u = tensor_tensor(t, y)`` where ``t`` is a ``tensor_scalar`` 's result read only
    here (a chain of one column step), or the result of a ``tensor_tensor`` that began a
    chain of two (``pending``): the chain runs where ``u`` does."""
    stmt = program[node]
    data = stmt.operands[0]
    producer = _sole_writer(program, data.var)
    if producer is None or stmt.accumulate or node in fusions.taken:
        return
    if program.consumers_of(data.var) != ((node, 0),) or program[producer].dst.slices != data.slices:
        return
    if producer in pending:
        scalar, first = pending.pop(producer)
        if program[scalar].attr("op") == program[first].attr("op") in COMMUTING:
            _chain(program, position, fusions, (scalar, first, node))
        return
    source = program[producer]
    if source.op.name not in SCALAR_OPS or source.accumulate or producer in fusions.absorbed:
        return
    if producer in fusions.first_of:
        pending[node] = (producer, node)
    else:
        _chain(program, position, fusions, (producer, node))


def _chain(program: Program, position: _Order, fusions: Fusions, chain: tuple[int, ...]) -> None:
    """Record ``chain`` when nothing lowered between an earlier member and the last one
    writes what that member (with the column step fused into the first) reads."""
    last = chain[-1]
    for member in chain[:-1]:
        steps = [member, *((fusions.first_of[member],) if member in fusions.first_of else ())]
        reads = {program[m].operands[p].var for m in steps for p in program[m].op.read_positions}
        if not _untouched_writes(program, _running_between(position, fusions, member, last), reads):
            return
    fusions.chains[last] = chain
    fusions.taken.update(chain)
    for member in chain[:-1]:
        fusions.absorbed.add(member)
        fusions.runs_at[member] = last
    for member, at in fusions.runs_at.items():
        if at in chain[:-1]:
            fusions.runs_at[member] = last


def _untouched_writes(program: Program, nodes: Iterable[int], variables: set[str]) -> bool:
    return not any(program[n].dst.var in variables for n in nodes)


def _negated_max(program: Program, fusions: Fusions, node: int) -> None:
    """``n = -max(x)``: the reduction negates (``negate=True``) when only ``n`` reads the max."""
    stmt = program[node]
    consumers = program.consumers_of(stmt.dst.var)
    if stmt.accumulate or len(consumers) != 1 or len(program.writers_of(stmt.dst.var)) != 1:
        return
    negation, _ = consumers[0]
    if fusions.taken & {node, negation} or not _is_negation(program[negation], stmt):
        return
    fusions.add(fusions.negation_of, node, negation, absorbed=negation)


def _is_negation(stmt: Statement, of: Statement) -> bool:
    return (
        stmt.op.name == "tensor_scalar"
        and not stmt.accumulate
        and stmt.attr("op") == "multiply"
        and stmt.attr("scalar") == -1
        and stmt.operands[0] == of.dst
    )


def _transpose_groups(
    program: Program, order: list[int], fusions: Fusions, columns: Callable[[Statement], int]
) -> None:
    """Transposes of equal blocks (same rows, width and dtype) of tiles written once, in
    ``order``, in groups whose results fit ``columns``: each group runs where its first one
    does, so a block joins a group only if its tile is written before that (not by the
    group's first member: a transpose of a transpose starts its own). Each member
    writes a variable of its own, which only statements after it read."""
    position = {node: i for i, node in enumerate(order)}
    open_groups: dict[tuple[object, ...], list[int]] = {}
    groups: list[list[int]] = []
    for node in order:
        stmt = program[node]
        if stmt.op.name != "nc_transpose" or stmt.accumulate:
            continue
        data = stmt.operands[0]
        (r0, r1), (c0, c1) = data.slices
        source = _sole_writer(program, data.var)
        if source is None or _sole_writer(program, stmt.dst.var) != node:
            continue
        key = ((r0, r1), c1 - c0, program.variables[data.var].dtype)
        group = open_groups.get(key)
        room = columns(stmt) // (r1 - r0)
        if group is None or len(group) >= room or position[source] >= position[group[0]]:
            group = open_groups[key] = [node]
            groups.append(group)
        else:
            group.append(node)
    for members in groups:
        if len(members) < 2:
            continue
        fusions.transposes_of[members[0]] = tuple(members)
        fusions.taken.update(members)
        for member in members[1:]:
            fusions.absorbed.add(member)
            fusions.runs_at[member] = members[0]
