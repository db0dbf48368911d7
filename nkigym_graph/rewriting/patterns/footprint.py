"""What a batch needs to know of a pattern match, computed from the match and its edit.

A ``Match`` states the statements it changes (from its edit), those it relies on
unchanged (``reads``) and the variables another match must not rename (``mentions``);
the driver applies non-conflicting matches of one analysis together on that word
(``nkigym_graph.rewriting.rewrite.select_non_conflicting``). For a pattern match the
footprint follows from what was matched and what the edit does, so authors never
write it:

- ``reads``: every matched statement, the writers of every variable a rename
  redirects to or an inserted statement reads, and the producers of every statement
  replaced or absorbed (a merge relies on them not to form a cycle), less the
  statements the edit changes;
- ``mentions``: the variables of the matched and changed statements, of their
  replacements and of the inserted statements, and every rename's target.

Forwards compose (``compose_forwards``): removing ``relu(t2)`` in favour of ``t2``
stays right when ``t2`` itself is forwarded to ``t1`` in the same batch (the values are
equal), so a chain folds at once; the renames are chained into one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from nkigym_graph.rewriting.patterns.tree import Found
from nkigym_graph.rewriting.transform import Edit, Match, Rename

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program


def pattern_match(transform: str, program: Program, found: Found, edit: Edit, detail: str) -> Match:
    """The match performing ``edit`` on what ``found`` matched in ``program``."""
    changes = edit.changes
    reads = set(found.nodes)
    for rename in edit.renames.values():
        reads.update(program.writers_of(rename.var))
    for node in {*edit.replace, *edit.absorb, *edit.absorb.values()}:
        reads.update(program.pred_of(node))
    inserted = edit.inserted
    for stmt in inserted:
        for operand in stmt.reads:
            reads.update(program.writers_of(operand.var))
    mentions = {o.var for node in {*found.nodes, *changes} for o in program[node].operands}
    mentions.update(o.var for stmt in (*edit.replace.values(), *inserted) for o in stmt.operands)
    mentions.update(rename.var for rename in edit.renames.values())
    return Match(
        transform=transform,
        nodes=tuple(program.in_order({*found.nodes, *changes})),
        edit=edit,
        reads=frozenset(reads - changes),
        mentions=frozenset(mentions),
        detail=detail,
        program_hash=program,  # hashed when first read
    )


def is_forward(edit: Edit) -> bool:
    """Whether ``edit`` only removes statements and redirects their readers."""
    return bool(edit.remove and edit.renames) and not (
        edit.replace or edit.absorb or edit.schedule or edit.insert
    )


def compose_forwards(matches: Sequence[Match]) -> list[Match]:
    """``matches`` with their forwards (``is_forward``) combined into one match, first:
    each forward joins unless it removes a statement or renames a variable one before
    it did, or its renames do not chain (a cycle, offsets along two dimensions)."""
    forwards = [m for m in matches if is_forward(m.edit)]
    if len(forwards) < 2:
        return list(matches)
    removed: set[int] = set()
    renames: dict[str, Rename] = {}
    taken: list[Match] = []
    for match in forwards:
        edit = match.edit
        if edit.remove & removed or any(var in renames for var in edit.renames):
            continue
        trial = {**renames, **edit.renames}
        if chained(trial) is None:
            continue
        renames, removed = trial, removed | edit.remove
        taken.append(match)
    final = chained(renames)
    if final is None or len(taken) < 2:  # nothing to combine
        return list(matches)
    first = taken[0]
    combined = Match(
        transform=first.transform,
        nodes=tuple(sorted({node for m in taken for node in m.nodes})),
        edit=Edit(remove=frozenset(removed), renames=final),
        reads=frozenset().union(*(m.reads for m in taken)) - removed,
        mentions=frozenset().union(*(m.mentions for m in taken)),
        detail=f"{len(taken)} forwards: {'; '.join(m.detail for m in taken[:4])}{'; ...' * (len(taken) > 4)}",
        program_hash=first.program_hash,
    )
    joined = {id(m) for m in taken}
    return [combined, *(m for m in matches if id(m) not in joined)]


def chained(renames: Mapping[str, Rename]) -> dict[str, Rename] | None:
    """Each rename followed through the others to a variable not renamed, or None when
    the renames form a cycle or shift along two dimensions."""
    out: dict[str, Rename] = {}
    for var in renames:
        seen = {var}
        step = renames[var]
        while step.var in renames:
            if step.var in seen:
                return None
            seen.add(step.var)
            joined = _then(step, renames[step.var])
            if joined is None:
                return None
            step = joined
        out[var] = step
    return out


def _then(first: Rename, second: Rename) -> Rename | None:
    """Renaming by ``first`` and then by ``second``, as one rename (None: not one)."""
    if not first.offset:
        return second
    if not second.offset:
        return Rename(second.var, first.dim, first.offset)
    if first.dim == second.dim:
        return Rename(second.var, first.dim, first.offset + second.offset)
    return None
