"""Deriving a snapshot from its parent by an edit, in time proportional to the edit.

An edit (``nkigym_graph.rewriting.rewrite``) replaces, removes and renames a few statements.
Everything a snapshot holds is per variable or per statement: a variable's definition
and its dependency edges depend only on the statements that mention it, a statement's
verdicts only on the statement and its variables. So the child recomputes the
*touched* variables (those mentioned by an edited or removed statement, before or
after the edit) over the statements mentioning them, verifies the edited statements
and those statements, and takes the rest from the parent with positions shifted. The
result is the same snapshot a full build gives (tests build both and compare), with
the same verification rules applied to everything that changed.

The ``Derivation`` a derived snapshot keeps lets its lazy parts follow suit: Merkle
keys recompute only downstream of dirty statements, the index shifts the parent's, and
transforms may update their analysis (``Transform.reanalysis``).

>>> from nkigym_graph import apply, get_transform, tile, nc_matmul
>>> root = tile(nc_matmul, {"lhs": (128, 128), "rhs": (128, 256)})
>>> transform = get_transform("operand_merge")
>>> child = apply(root, transform, transform.analyze(root)[0])
>>> child.derivation is not None and child.derivation.parent() is root
True
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any, NamedTuple

from nkigym_graph.ir.capacity import check_capacity
from nkigym_graph.ir.dependencies import Dependencies, Use, build_dependencies
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.ir.variables import Variable, check_arity, record_write
from nkigym_graph.ir.verify import Describe, check_dependencies, check_returns, check_statements

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program


class Derivation(NamedTuple):
    """How a snapshot was derived from its parent."""

    parent: weakref.ref[Program]
    """The parent snapshot (while it is alive)."""
    old_of: Sequence[int]
    """Per position here, the parent position of the statement (edited or not)."""
    new_of: Sequence[int]
    """Per parent position, the position here (-1: removed or absorbed)."""
    gone: tuple[int, ...]
    """Parent positions of the statements removed or absorbed."""
    changed: frozenset[int]
    """Positions whose statement differs from the parent's."""
    dirty: frozenset[int]
    """Positions whose statement or incoming edges changed, or that mention an on-chip
    tile the edit touched (its writers or readers may have changed)."""
    altered: frozenset[int]
    """The part of ``dirty`` whose statement, incoming edges, or the definition of a
    variable they mention changed (what a statement's Merkle key and merge signature
    depend on); the readers of a tile that only gained or lost other readers are not."""
    touched: frozenset[str]
    """Variables whose definition and edges were recomputed."""
    keys: tuple[str, ...] | None
    """The parent's Merkle keys, if it had computed them."""


def _mentioned(stmt: Statement) -> set[str]:
    return {operand.var for operand in stmt.operands}


def derive_program(
    parent: Program,
    order: Sequence[int],
    gone: Sequence[int],
    statements: Sequence[Statement],
    edited: Set[int],
) -> Program:
    """The snapshot whose statements are ``statements``: the parent's statements at
    ``order`` (``ascending_without(len(parent), gone)``; ``gone`` ascending), with those
    at ``edited`` (parent positions) changed. Raises ``VerificationError`` like a full
    build."""
    from nkigym_graph.ir.program import Program

    n_old = len(parent.statements)
    new_of = _positions_after(n_old, gone)
    changed = {new_of[old] for old in edited if new_of[old] >= 0}
    shift_from = min(gone, default=n_old)
    old_statements = parent.statements

    touched: set[str] = set()
    for old in (*edited, *gone):
        touched |= _mentioned(old_statements[old])
    for new in changed:
        touched |= _mentioned(statements[new])
    params = {param.name for param in parent.params}
    tracked = touched - params
    nodes = _mentioning(parent, tracked, new_of, edited, changed)

    table: dict[str, Variable] = {}
    describe = _describer(parent, statements, table)
    write_counts = _define_variables(
        table, parent, statements, new_of, shift_from, tracked, nodes, changed, describe
    )
    redefined = _redefined(parent, table, write_counts, tracked, new_of)
    check_statements(
        statements,
        table,
        parent.target,
        describe,
        sorted(_mentioning_any(statements, nodes, redefined) | changed),
    )
    check_capacity(statements, table, parent.target, describe, tracked)
    deps = build_dependencies(statements, write_counts, nodes)
    check_dependencies(statements, table, deps, describe)
    written = {var for var in parent.returns if var not in tracked or write_counts.get(var)}
    check_returns(parent.returns, table, written)

    data_in, order_in, rewired = _edges(parent, order, new_of, shift_from, tracked, nodes, deps)
    # what a statement's analyses depend on: its statement, its edges, and the records,
    # writers and readers of its on-chip tiles (an HBM tensor's readers do not matter)
    on_chip = {var for var in tracked if var not in table or not table[var].external}
    rewritten = {o.var for node in changed for o in _writes(statements[node])} & tracked
    altered = changed | rewired | _mentioning_any(statements, nodes, redefined | rewritten)
    dirty = altered | _mentioning_any(statements, nodes, on_chip)
    derivation = Derivation(
        parent=weakref.ref(parent),
        old_of=order,
        new_of=new_of,
        gone=tuple(gone),
        changed=frozenset(changed),
        dirty=frozenset(dirty),
        altered=frozenset(altered),
        touched=frozenset(touched),
        keys=parent._keys,
    )
    return Program._assemble(parent, tuple(statements), table, data_in, order_in, derivation)


def ascending_without(n: int, gone: Sequence[int]) -> list[int]:
    """``0 .. n-1`` without the ascending positions ``gone``, built a run at a time."""
    out: list[int] = []
    start = 0
    for missing in gone:
        out.extend(range(start, missing))
        start = missing + 1
    out.extend(range(start, n))
    return out


def _positions_after(n_old: int, gone: Sequence[int]) -> list[int]:
    """Each parent position's position once the ascending ``gone`` ones are dropped
    (-1 for those), built a run at a time."""
    new_of: list[int] = []
    start = 0
    for shift, missing in enumerate(gone):
        new_of.extend(range(start - shift, missing - shift))
        new_of.append(-1)
        start = missing + 1
    new_of.extend(range(start - len(gone), n_old - len(gone)))
    return new_of


def _redefined(
    parent: Program,
    table: Mapping[str, Variable],
    write_counts: Mapping[str, int],
    tracked: Set[str],
    new_of: Sequence[int],
) -> set[str]:
    """The tracked variables whose record (definition aside) or number of writers changed."""
    out = set()
    for var in tracked:
        old, new = parent.variables.get(var), table.get(var)
        if old is None or new is None:
            if old is not new:
                out.add(var)
        elif (
            old[:4] != new[:4]
            or old.external != new.external
            or (old.defined_by is None) != (new.defined_by is None)
            or (old.defined_by is not None and new_of[old.defined_by] != new.defined_by)
            or len(parent.writers_of(var)) != write_counts.get(var, 0)
        ):
            out.add(var)
    return out


def _new_variable(fields: tuple[Any, ...]) -> Variable:
    """``Variable(*fields)`` without the keyword handling of the generated constructor."""
    return tuple.__new__(Variable, fields)


def _writes(stmt: Statement) -> list[Operand]:
    return [stmt.operands[p] for p in stmt.op.write_positions]


def _mentioning_any(statements: Sequence[Statement], nodes: Sequence[int], variables: Set[str]) -> set[int]:
    """The statements at ``nodes`` that mention one of ``variables``."""
    if not variables:
        return set()
    return {node for node in nodes if any(o.var in variables for o in statements[node].operands)}


def _mentioning(
    parent: Program, tracked: Set[str], new_of: Sequence[int], edited: Set[int], changed: Set[int]
) -> list[int]:
    """Positions (in the child, ascending) of the statements that mention ``tracked``."""
    found = set(changed)
    for var in tracked:
        for old in parent.writers_of(var):
            if new_of[old] >= 0 and old not in edited:
                found.add(new_of[old])
        for old, _ in parent.consumers_of(var):
            if new_of[old] >= 0 and old not in edited:
                found.add(new_of[old])
    return sorted(found)


def _define_variables(
    table: dict[str, Variable],
    parent: Program,
    statements: Sequence[Statement],
    new_of: Sequence[int],
    shift_from: int,
    tracked: Set[str],
    nodes: Sequence[int],
    changed: Set[int],
    describe: Describe,
) -> dict[str, int]:
    """Fill ``table``: the parent's variables, definitions shifted, the ``tracked`` ones
    redefined from their writers; return the write counts of the tracked ones."""
    for name, info in parent.variables.items():
        defined_by = info.defined_by
        if name in tracked and defined_by is not None:
            continue  # redefined below
        if defined_by is not None and defined_by >= shift_from:
            info = _new_variable((name, info.kind, info.shape, info.dtype, new_of[defined_by], info.external))
        table[name] = info
    counts: dict[str, int] = {}
    for node in nodes:
        stmt = statements[node]
        if node in changed:
            check_arity(stmt, node, describe)
        for position in stmt.op.write_positions:
            if stmt.operands[position].var in tracked:
                record_write(table, counts, node, stmt, position, describe)
    return counts


def _edges(
    parent: Program,
    order: Sequence[int],
    new_of: Sequence[int],
    shift_from: int,
    tracked: Set[str],
    nodes: Sequence[int],
    deps: Dependencies,
) -> tuple[list[tuple[tuple[int, Use], ...]], list[tuple[tuple[int, str], ...]], set[int]]:
    """Per node, its incoming data and ordering edges: the parent's shifted, those of
    ``tracked`` variables replaced by the recomputed ones (``deps``); and the nodes
    whose edges changed."""
    old_data, old_order = parent._data_in, parent._order_in
    data_in = list(old_data[:shift_from])
    order_in = list(old_order[:shift_from])
    for old in order[shift_from:]:
        incoming = old_data[old]
        data_in.append(tuple([(new_of[src], use) for src, use in incoming]) if incoming else ())
        ordered = old_order[old]
        order_in.append(tuple([(new_of[src], var) for src, var in ordered]) if ordered else ())
    new_data, new_order = deps.data, deps.order
    rewired = set()
    for node in nodes:
        before_data, before_order = data_in[node], order_in[node]
        kept = tuple(edge for edge in before_data if edge[1].var not in tracked)
        data_in[node] = kept + tuple(new_data.get(node, ()))
        kept_order = tuple(edge for edge in before_order if edge[1] not in tracked)
        order_in[node] = kept_order + tuple(dict.fromkeys(new_order.get(node, ())))
        if set(data_in[node]) != set(before_data) or set(order_in[node]) != set(before_order):
            rewired.add(node)
    return data_in, order_in, rewired


def _describer(parent: Program, statements: Sequence[Statement], table: Mapping[str, Variable]) -> Describe:
    """Renders a child statement for error messages."""
    from nkigym_graph.ir.printer import format_statement_in

    def describe(node: int) -> str:
        try:
            return format_statement_in(statements, table, parent.explicit_slices, node)
        except (IndexError, KeyError, TypeError):  # too malformed for its own syntax
            stmt = statements[node]
            return f"{stmt.op.name}({', '.join(str(o) for o in stmt.operands)})"

    return describe
