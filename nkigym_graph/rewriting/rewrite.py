"""Applying edits: one or many non-conflicting edits, one rebuild.

The result is derived from the input snapshot (``nkigym_graph.ir.derivation``) unless the
edits change a large part of it, move statements or insert new ones, when it is built
in full; either way the statements kept or edited keep their ids, and inserted ones get
fresh ids in program order. The edited statement list keeps the
original order. Where an absorbed statement's producers come after its keeper, the
keeper must move later: the nodes are then re-linearised by a stable topological sort
of the contracted DAG (original order breaks ties), which only exists when the merge
creates no cycle; otherwise the edit is refused with the cycle named.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Sequence

from nkigym_graph.errors import TransformError, VerificationError
from nkigym_graph.ir.derivation import derive_program
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.schedule import Schedule, ScheduleError
from nkigym_graph.ir.statement import Statement
from nkigym_graph.rewriting.transform import Edit, Match, Rename

_DERIVE_LIMIT = 1 / 32
"""Edits changing more than this fraction of the statements (and more than
``_DERIVE_ALWAYS``) rebuild the snapshot in full: deriving recomputes every variable
they touch, and past this a full build is faster."""
_DERIVE_ALWAYS = 256


def apply_edits(program: Program, edits: Iterable[Edit], transform: str = "edit") -> Program:
    """A new snapshot with all ``edits`` applied (they must not change the same node)."""
    replace: dict[int, Statement] = {}
    absorb: dict[int, int] = {}
    remove: set[int] = set()
    renames: dict[str, Rename] = {}
    insert: dict[int, tuple[Statement, ...]] = {}
    changed: set[int] = set()
    schedule = None
    for edit in edits:
        if edit.schedule is not None:
            if schedule is not None:
                raise TransformError(f"{transform}: edits set the schedule twice")
            schedule = edit.schedule
        overlap = edit.changes & changed
        if overlap:
            raise TransformError(f"{transform}: edits change the same statements {sorted(overlap)}")
        twice = [var for var in edit.renames if var in renames]
        if twice:
            raise TransformError(f"{transform}: edits rename the same variables {sorted(twice)}")
        changed |= edit.changes
        replace.update(edit.replace)
        absorb.update(edit.absorb)
        remove |= edit.remove
        renames.update(edit.renames)
        insert.update(edit.insert)
    if not replace and not absorb and not remove and not renames and not insert:
        return program if schedule is None else _scheduled(program, schedule, transform)
    edited_program = _statements_edited(program, replace, absorb, remove, renames, insert, transform)
    return edited_program if schedule is None else _scheduled(edited_program, schedule, transform)


def _scheduled(program: Program, schedule: Schedule, transform: str) -> Program:
    try:
        return program.with_schedule(schedule)
    except ScheduleError as err:
        raise TransformError(f"{transform} produced an invalid schedule: {err}") from err


def _statements_edited(
    program: Program,
    replace: dict[int, Statement],
    absorb: dict[int, int],
    remove: set[int],
    renames: dict[str, Rename],
    insert: dict[int, tuple[Statement, ...]],
    transform: str,
) -> Program:
    keeper_of = {node: _final_keeper(node, absorb) for node in absorb}
    gone = remove.union(keeper_of)
    missing = sorted(node for node in (*gone, *replace, *insert) if node not in program)
    if missing:
        raise TransformError(f"{transform}: edits name statements {missing[:6]} the program does not have")
    lost = sorted(gone.intersection(insert))
    if lost:
        raise TransformError(f"{transform}: edits insert statements before statements {lost[:6]} they remove")
    moved = _moved_order(program, keeper_of, remove)
    edited = set(replace)
    for var in renames:
        edited.update(program.writers_of(var))
        edited.update(node for node, _ in program.consumers_of(var))

    def edited_statement(node: int) -> Statement:
        return replace[node] if node in replace else _renamed(program[node], renames)

    try:
        changes = len(edited) + len(gone)
        if (
            moved is not None
            or insert
            or changes > max(_DERIVE_ALWAYS, _DERIVE_LIMIT * (len(program) - len(gone)))
        ):
            order = moved if moved is not None else [node for node in program.ids if node not in gone]
            statements = [edited_statement(node) if node in edited else program[node] for node in order]
            return program.rebuilt(*_with_inserted(statements, order, insert))
        replaced = {node: edited_statement(node) for node in edited if node not in gone}
        return derive_program(program, replaced, gone)
    except VerificationError as err:
        raise TransformError(f"{transform} produced an invalid program: {err}") from err


def _with_inserted(
    statements: list[Statement], order: list[int], insert: dict[int, tuple[Statement, ...]]
) -> tuple[list[Statement], list[int]]:
    """``statements`` (with ids ``order``) with ``insert[node]`` placed before ``node``;
    an inserted statement's id is -1 (``Program.rebuilt`` gives it a fresh one)."""
    if not insert:
        return statements, order
    out: list[Statement] = []
    ids: list[int] = []
    for node, stmt in zip(order, statements, strict=True):
        new = insert.get(node, ())
        out.extend(new)
        ids.extend([-1] * len(new))
        out.append(stmt)
        ids.append(node)
    return out, ids


def _renamed(stmt: Statement, renames: dict[str, Rename]) -> Statement:
    operands = stmt.operands
    if not any(o.var in renames for o in operands):
        return stmt
    moved = tuple(renames[o.var].apply(o) if o.var in renames else o for o in operands)
    return Statement(stmt.op, moved, stmt.attrs, stmt.accumulate)


def _final_keeper(node: int, absorb: dict[int, int]) -> int:
    seen = {node}
    while node in absorb:
        node = absorb[node]
        if node in seen:
            raise TransformError(f"absorption cycle through statement {node}")
        seen.add(node)
    return node


def _moved_order(program: Program, keeper_of: dict[int, int], remove: set[int]) -> list[int] | None:
    """The surviving statements (ids) in an order that respects the contracted DAG when
    some statement has to move for it; None when the program order will do."""
    if not keeper_of:
        return None
    rank, pred_of = program.order_key, program.pred_of
    needs_move = any(
        rank(src) > rank(keeper) and keeper_of.get(src, src) != keeper
        for node, keeper in keeper_of.items()
        for src in pred_of(node)
    )
    if not needs_move:
        return None
    order = _stable_topological(program, keeper_of, remove)
    if all(rank(a) < rank(b) for a, b in itertools.pairwise(order)):
        return None
    return order


def _stable_topological(program: Program, keeper_of: dict[int, int], remove: set[int]) -> list[int]:
    rank = program.order_key
    alive = [node for node in program.ids if node not in remove and node not in keeper_of]
    indegree = dict.fromkeys(alive, 0)
    succ: dict[int, set[int]] = {node: set() for node in alive}
    for v in program.ids:
        for u in program.pred_of(v):
            ru, rv = keeper_of.get(u, u), keeper_of.get(v, v)
            if ru == rv or ru in remove or rv in remove or rv in succ[ru]:
                continue
            succ[ru].add(rv)
            indegree[rv] += 1
    ready = [(rank(node), node) for node, d in indegree.items() if d == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, node = heapq.heappop(ready)
        order.append(node)
        for nxt in succ[node]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                heapq.heappush(ready, (rank(nxt), nxt))
    if len(order) != len(alive):
        stuck = sorted(node for node, d in indegree.items() if d > 0)[:6]
        raise TransformError(f"the merge would create a dependency cycle through statements {stuck}")
    return order


def select_non_conflicting(matches: Sequence[Match]) -> list[Match]:
    """The matches to apply in one batch: each kept unless it conflicts with a kept one
    (the rule of ``Match.conflicts_with``, checked against the union of those kept)."""
    kept: list[Match] = []
    changed: set[int] = set()
    read: set[int] = set()
    renamed: set[str] = set()
    mentioned: set[str] = set()
    scheduled = False
    for match in matches:
        mine, names = match.changes, match.renamed
        if (
            (scheduled and match.edit.schedule is not None)
            or mine & changed
            or mine & read
            or match.reads & changed
            or names & renamed
            or names & mentioned
            or renamed & match.mentions
        ):
            continue
        kept.append(match)
        scheduled = scheduled or match.edit.schedule is not None
        changed |= mine
        read |= match.reads
        renamed |= names
        mentioned |= match.mentions
    return kept
