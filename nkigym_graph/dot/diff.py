"""What a rewrite did: statements of two programs matched by canonical key.

Matching, in order:

1. *same*: equal Merkle keys (``Program.node_keys``), so the statement and everything
   it depends on are unchanged (renamed intermediates and moved statements included).
   Equal keys pair up in program order.
2. *changed*: left over on both sides with equal local keys: the same op and
   attributes, the same parameter and output regions, intermediate operands of the
   same extent, but a producer upstream was rewritten (a store now reading a merged
   matmul, a matmul reading its operand as a slice of a merged load).
3. *removed* (only in ``before``) and *added* (only in ``after``): the rest.

The diff scene is ``after``'s scene with a status on every box, plus a box for every
removed statement (id ``r<node>``). Edges are matched through the statements: an edge
of ``after`` is *added* unless ``before`` has the same kind of edge between the
matching statements, and ``before``'s edges without a match are drawn *removed*.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from functools import partial

from nkigym_graph.dot.scene import (
    Box,
    Scene,
    Terminal,
    program_arrows,
    terminal_arrows,
    terminals_of,
    title_of,
)
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.variables import INTERMEDIATE


@dataclass(frozen=True)
class Matching:
    """How the statements of ``before`` and ``after`` correspond."""

    after_status: tuple[str, ...]
    """Per ``after`` statement (in program order): ``same``, ``changed`` or ``added``."""
    before_of: tuple[int | None, ...]
    """Per ``after`` statement: the position of the ``before`` statement it matches
    (None when added)."""
    removed: tuple[int, ...]
    """Positions of the ``before`` statements with no counterpart, ascending."""


def local_key(program: Program, node: int) -> Hashable:
    """A statement up to its intermediates: op, attributes, the name and slices of each
    parameter or output operand, and the extent of each intermediate operand."""
    stmt = program[node]
    variables = program.variables
    operands = tuple(
        ("~", tuple(stop - start for start, stop in o.slices))
        if variables[o.var].kind == INTERMEDIATE
        else (o.var, o.slices)
        for o in stmt.operands
    )
    return (stmt.op.name, stmt.attrs, stmt.accumulate, operands)


def match(before: Program, after: Program) -> Matching:
    """Pair the statements of two programs (see the module docstring)."""
    status = ["added"] * len(after)
    before_of: list[int | None] = [None] * len(after)
    left = set(range(len(before)))
    for by_merkle in (True, False):

        def keys_of(p: Program, at: int, merkle: bool = by_merkle) -> Hashable:
            node = p.ids[at]
            return p.node_keys[node] if merkle else local_key(p, node)

        pool: dict[Hashable, deque[int]] = {}
        for node in sorted(left):
            pool.setdefault(keys_of(before, node), deque()).append(node)
        for node in range(len(after)):
            if before_of[node] is not None:
                continue
            found = pool.get(keys_of(after, node))
            if found:
                before_of[node] = paired = found.popleft()
                left.discard(paired)
                status[node] = "same" if by_merkle else "changed"
    return Matching(tuple(status), tuple(before_of), tuple(sorted(left)))


def diff_scene(
    before: Program,
    after: Program,
    before_groups: list[Hashable | None] | None,
    after_groups: list[Hashable | None] | None,
) -> tuple[Scene, Matching]:
    """The scene of ``after`` with statuses, removed statements and their edges."""
    found = match(before, after)
    after_id = {node: f"n{node}" for node in after.ids}
    before_id = {node: f"r{node}" for node in before.ids}
    for at, paired in enumerate(found.before_of):
        if paired is not None:
            before_id[before.ids[paired]] = after_id[after.ids[at]]
    counts = {s: found.after_status.count(s) for s in ("added", "changed")}
    title = (
        f"{title_of(before)}\n-> {title_of(after)}\n"
        f"{len(found.removed)} removed, {counts['added']} added, {counts['changed']} changed"
    )
    scene = Scene(title, terminals=_terminals(before, after))
    for at, (node, stmt) in enumerate(after.items()):
        state = found.after_status[at]
        tooltip = f"#{node} {state}"
        paired = found.before_of[at]
        if state == "changed" and paired is not None:
            tooltip += f"; was {before.describe(before.ids[paired])}"
        group = after_groups[at] if after_groups is not None else None
        scene.boxes.append(
            Box(after_id[node], stmt.op.name, partial(after.describe, node), group, state, tooltip)
        )
    for at in found.removed:
        node = before.ids[at]
        group = before_groups[at] if before_groups is not None else None
        op = before[node].op.name
        scene.boxes.append(
            Box(before_id[node], op, partial(before.describe, node), group, "removed", f"#{node} removed")
        )
    old_arrows = terminal_arrows(before, before_id) + program_arrows(before, before_id)
    new_arrows = terminal_arrows(after, after_id) + program_arrows(after, after_id)
    old_ends = {(a.src, a.dst, a.kind) for a in old_arrows}
    new_ends = {(a.src, a.dst, a.kind) for a in new_arrows}
    for arrow in new_arrows:
        status = "same" if (arrow.src, arrow.dst, arrow.kind) in old_ends else "added"
        scene.arrows.append(arrow._replace(status=status))
    for arrow in old_arrows:
        if (arrow.src, arrow.dst, arrow.kind) not in new_ends:
            scene.arrows.append(arrow._replace(status="removed"))
    return scene, found


def _terminals(before: Program, after: Program) -> list[Terminal]:
    terminals = {t.id: t for t in terminals_of(after)}
    for t in terminals_of(before):
        terminals.setdefault(t.id, t)
    return list(terminals.values())
