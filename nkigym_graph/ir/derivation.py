"""Deriving a snapshot from its parent by an edit, in time proportional to the edit.

An edit (``nkigym_graph.rewriting.rewrite``) replaces, removes and renames a few statements.
Everything a snapshot holds is per variable or per statement: a variable's definition
and its dependency edges depend only on the statements that mention it, a statement's
verdicts only on the statement and its variables. So the child recomputes the
*touched* variables (those mentioned by an edited or removed statement, before or
after the edit) over the statements mentioning them, verifies the edited statements
and those statements, and takes the rest from the parent as it is: statements keep
their ids, so the parent's per-statement tables (edges, variable definitions, keys)
hold for every statement the edit did not touch: the child copies the variables (a
C-level dict copy) and overwrites the touched entries, and shares the edges and keys
of a large parent through an overlay of the changed entries (``ir/overlay.py``). The result is the same
snapshot a full build gives (tests build both and compare, ids mapped by position),
with the same verification rules applied to everything that changed.

The ``Derivation`` a derived snapshot keeps lets its lazy parts follow suit: Merkle
keys recompute only downstream of dirty statements, the index drops and re-enters the
changed statements, and transforms may update their analysis
(``Transform.reanalysis``), all in statement ids.

>>> from nkigym_graph import apply, get_transform, tile, nc_matmul
>>> root = tile(nc_matmul, {"lhs": (128, 128), "rhs": (128, 256)})
>>> transform = get_transform("operand_merge")
>>> child = apply(root, transform, transform.analyze(root)[0])
>>> child.derivation is not None and child.derivation.parent() is root
True
"""

from __future__ import annotations

import itertools
import weakref
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence, Set
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from nkigym_graph.ir.capacity import check_capacity
from nkigym_graph.ir.dependencies import Dependencies, Use, build_dependencies
from nkigym_graph.ir.overlay import REMOVED, over
from nkigym_graph.ir.program_arguments import check_statement
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.ir.variables import Variable, check_arity, record_write
from nkigym_graph.ir.verify import Describe, check_dependencies, check_returns, check_statements, stored

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

T = TypeVar("T")


class Derivation(NamedTuple):
    """How a snapshot was derived from its parent (every node named by its id, which
    the statements kept or edited share with the parent)."""

    parent: weakref.ref[Program]
    """The parent snapshot (while it is alive)."""
    removed: frozenset[int]
    """The parent's statements removed or absorbed."""
    changed: frozenset[int]
    """Statements that differ from the parent's."""
    dirty: frozenset[int]
    """Statements whose statement or incoming edges changed, or that mention an on-chip
    tile the edit touched (its writers or readers may have changed)."""
    altered: frozenset[int]
    """The part of ``dirty`` whose statement, incoming edges, or the definition of a
    variable they mention changed (what a statement's Merkle key and merge signature
    depend on); the readers of a tile that only gained or lost other readers are not."""
    touched: frozenset[str]
    """Variables whose definition and edges were recomputed."""
    keys: Mapping[int, str] | None
    """The parent's Merkle keys, if it had computed them."""
    key_sum: int
    """Their ``key_sum`` (0 when unknown)."""


def _mentioned(stmt: Statement) -> set[str]:
    return {operand.var for operand in stmt.operands}


def derive_program(parent: Program, replaced: Mapping[int, Statement], removed: Set[int]) -> Program:
    """The snapshot whose statements are the parent's in the same order, without those
    ``removed`` and with those ``replaced`` (ids of the parent's statements; disjoint).
    Raises ``VerificationError`` like a full build (rule ``argument`` for a replacement
    that is not a well-typed ``Statement``)."""
    from nkigym_graph.ir.program import Program

    for node, stmt in replaced.items():  # a full build checks its statements so (statements_of)
        check_statement(stmt, f"the statement given for statement {node}")
    gone_at = sorted(parent.position(node) for node in removed)
    ids = tuple(_without(parent.ids, gone_at))
    listed = _without(parent.statements, gone_at)
    for node, stmt in replaced.items():
        at = parent.position(node)
        listed[at - bisect_left(gone_at, at)] = stmt
    statements = tuple(listed)
    changed = set(replaced)

    touched: set[str] = set()
    for old in (*replaced, *removed):
        touched |= _mentioned(parent[old])
    for stmt in replaced.values():
        touched |= _mentioned(stmt)
    params = {param.name for param in parent.params}
    tracked = touched - params
    nodes = _mentioning(parent, tracked, changed, removed)
    lookup = {node: replaced[node] if node in changed else parent[node] for node in nodes}

    table = _copied(parent.variables)
    for var in tracked:
        info = table.get(var)
        if info is not None and info.defined_by is not None:
            del table[var]  # redefined from its writers below
    describe = _describer(parent, lookup, ids, statements, table)
    write_counts = _define_variables(table, lookup, tracked, nodes, changed, describe)
    redefined = _redefined(parent, table, write_counts, tracked)
    rank = parent._rank.__getitem__
    check_statements(
        lookup,
        table,
        parent.target,
        describe,
        sorted(_mentioning_any(lookup, nodes, redefined) | changed, key=rank),
    )
    check_capacity(lookup, table, parent.target, describe, sorted(tracked))
    deps = build_dependencies(lookup, write_counts, nodes)
    check_dependencies(lookup, table, deps, describe)
    written = {
        var for var in parent.returns if var not in tracked or stored(var, write_counts.get(var, 0), table)
    }
    check_returns(parent.returns, table, written)

    data_in, order_in, rewired = _edges(parent, removed, tracked, nodes, deps)
    # what a statement's analyses depend on: its statement, its edges, and the records,
    # writers and readers of its on-chip tiles (an HBM tensor's readers do not matter)
    on_chip = {var for var in tracked if var not in table or not table[var].external}
    rewritten = {o.var for node in changed for o in _writes(lookup[node])} & tracked
    altered = changed | rewired | _mentioning_any(lookup, nodes, redefined | rewritten)
    dirty = altered | _mentioning_any(lookup, nodes, on_chip)
    derivation = Derivation(
        parent=weakref.ref(parent),
        removed=frozenset(removed),
        changed=frozenset(changed),
        dirty=frozenset(dirty),
        altered=frozenset(altered),
        touched=frozenset(touched),
        keys=parent._keys,
        key_sum=parent._key_sum if parent._keys is not None else 0,
    )
    return Program._assemble(parent, statements, ids, table, data_in, order_in, derivation)


def _copied(variables: Mapping[str, Variable]) -> dict[str, Variable]:
    """A dict of ``variables`` (a snapshot's mapping proxy: its dict's copy, C-level)."""
    if isinstance(variables, MappingProxyType):
        copied: dict[str, Variable] = variables.copy()
        return copied
    return dict(variables)


FEW_GONE = 8
"""Positions ``_without`` deletes one at a time from a list copy (a C-level shift each);
more are copied a run at a time."""


def _without(items: Sequence[T], gone_at: Sequence[int]) -> list[T]:
    """``items`` without the ascending positions ``gone_at``."""
    if len(gone_at) <= FEW_GONE:
        kept = list(items)
        for at in reversed(gone_at):
            del kept[at]
        return kept
    kept = list(items[: gone_at[0]])
    for a, b in itertools.pairwise([*gone_at, len(items)]):
        kept += items[a + 1 : b]
    return kept


def _redefined(
    parent: Program,
    table: Mapping[str, Variable],
    write_counts: Mapping[str, int],
    tracked: Set[str],
) -> set[str]:
    """The tracked variables whose record or number of writers changed."""
    out = set()
    for var in tracked:
        old, new = parent.variables.get(var), table.get(var)
        if old is None or new is None:
            if old is not new:
                out.add(var)
        elif old != new or len(parent.writers_of(var)) != write_counts.get(var, 0):
            out.add(var)
    return out


def _writes(stmt: Statement) -> list[Operand]:
    return [stmt.operands[p] for p in stmt.op.write_positions]


def _mentioning_any(lookup: Mapping[int, Statement], nodes: Sequence[int], variables: Set[str]) -> set[int]:
    """The statements ``nodes`` that mention one of ``variables``."""
    found: set[int] = set()
    if not variables:
        return found
    for node in nodes:  # loops: a few operands each, any() of a generator costs more
        for operand in lookup[node].operands:
            if operand.var in variables:
                found.add(node)
                break
    return found


def _mentioning(parent: Program, tracked: Set[str], changed: Set[int], removed: Set[int]) -> list[int]:
    """The statements of the child (ids, in program order) that mention ``tracked``."""
    found = set(changed)
    for var in tracked:
        found.update(parent.writers_of(var))
        found.update(node for node, _ in parent.consumers_of(var))
    found -= removed
    return sorted(found, key=parent._rank.__getitem__)


def _define_variables(
    table: dict[str, Variable],
    lookup: Mapping[int, Statement],
    tracked: Set[str],
    nodes: Sequence[int],
    changed: Set[int],
    describe: Describe,
) -> dict[str, int]:
    """Redefine the ``tracked`` variables in ``table`` from their writers (``nodes`` in
    program order); return their write counts."""
    counts: dict[str, int] = {}
    for node in nodes:
        stmt = lookup[node]
        if node in changed:
            check_arity(stmt, node, describe)
        for position in stmt.op.write_positions:
            if stmt.operands[position].var in tracked:
                record_write(table, counts, node, stmt, position, describe)
    return counts


def _edges(
    parent: Program,
    removed: Iterable[int],
    tracked: Set[str],
    nodes: Sequence[int],
    deps: Dependencies,
) -> tuple[Mapping[int, tuple[tuple[int, Use], ...]], Mapping[int, tuple[tuple[int, str], ...]], set[int]]:
    """Per node, its incoming data and ordering edges: the parent's, those of
    ``tracked`` variables replaced by the recomputed ones (``deps``); and the nodes
    whose edges changed. The parent's tables are shared (``over``), not copied."""
    parent_data, parent_order = parent._data_in, parent._order_in
    gone = list(removed)
    data_in: dict[int, tuple[tuple[int, Use], ...]] = dict.fromkeys(gone, REMOVED)
    order_in: dict[int, tuple[tuple[int, str], ...]] = dict.fromkeys(gone, REMOVED)
    new_data, new_order = deps.data, deps.order
    rewired = set()
    for node in nodes:
        before_data, before_order = parent_data.get(node, ()), parent_order.get(node, ())
        kept = tuple(edge for edge in before_data if edge[1].var not in tracked)
        data = data_in[node] = kept + tuple(new_data.get(node, ()))
        kept_order = tuple(edge for edge in before_order if edge[1] not in tracked)
        order = order_in[node] = kept_order + tuple(dict.fromkeys(new_order.get(node, ())))
        # equal in order (cheap: the slices are the statements' own tuples) or else as sets
        if (data != before_data and set(data) != set(before_data)) or (
            order != before_order and set(order) != set(before_order)
        ):
            rewired.add(node)
    return over(parent_data, data_in), over(parent_order, order_in), rewired


def _describer(
    parent: Program,
    lookup: Mapping[int, Statement],
    ids: Sequence[int],
    statements: Sequence[Statement],
    table: Mapping[str, Variable],
) -> Describe:
    """Renders a child statement for error messages."""
    from nkigym_graph.ir.printer import format_statement_in

    def statement_of(node: int) -> Statement:
        found = lookup.get(node)
        if found is None:  # only when an error is described: a scan will do
            found = statements[ids.index(node)] if node in ids else parent[node]
        return found

    def describe(node: int) -> str:
        try:
            return format_statement_in(statement_of, table, parent.explicit_slices, node)
        except (IndexError, KeyError, TypeError):  # too malformed for its own syntax
            stmt = statement_of(node)
            return f"{stmt.op.name}({', '.join(str(o) for o in stmt.operands)})"

    return describe
