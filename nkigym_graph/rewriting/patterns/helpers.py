"""Rewrite helpers: the ``Edit`` of a common rewrite, or None where it would be wrong.

- ``forward(program, node)``: ``node`` computes nothing new (``relu`` of a relu): it is
  removed and its readers read what it reads instead.
- ``remove(program, *nodes)``: statements nobody reads are dropped.
- ``replace(program, node, statement)``: one statement becomes another.
- ``merge_run(program, nodes, axis)``: statements adjacent along ``axis`` (a set
  pattern's ``Found.nodes``) become one wider statement.
- ``dedupe(program, keeper, *duplicates)``: statements computing what ``keeper``
  computes (an equal pattern's ``Found.nodes``) are absorbed into it; their readers
  read its tile.
- ``insert_before(program, node, *statements)``: new statements just before ``node``
  (``new_name(program, node)`` names a tile they define), usually with ``node``
  replaced to read it: ``insert_before(...)`` and ``replace(...)`` combine with ``|``.

A helper checks what its rewrite needs of the program (who writes and reads the
variables it redirects) and returns None when that fails, so a transform's ``edit`` may
return a helper's result as it is.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> program = tiled_matmul(128, 128, 128)
>>> remove(program, 0) is None  # the matmul reads what statement 0 loads
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from nkigym_graph.errors import TransformError
from nkigym_graph.ir.statement import Statement
from nkigym_graph.rewriting.patterns.sets import adjacency
from nkigym_graph.rewriting.transform import Edit, Rename

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program


def forward(program: Program, node: int, operand: int = 0) -> Edit | None:
    """Remove ``node`` and let its readers read its ``operand``-th read instead.

    Valid for a statement whose result equals that operand, region for region (an
    idempotent op applied twice, a copy): the statement must be the only writer of a
    fresh on-chip tile that is not returned, write as much as it reads, and what it reads
    must be written before it and never again. Regions may be offset along one
    dimension (``Rename``). None otherwise.
    """
    stmt = program[node]
    reads = stmt.reads
    if stmt.accumulate or not 0 <= operand < len(reads) or len(stmt.writes) != 1:
        return None
    source, dst = reads[operand], stmt.dst
    if not _private(program, node, dst.var) or source.var == dst.var:
        return None
    source_info = program.variables.get(source.var)
    if source_info is None or source_info.external:
        return None
    rank = program.order_key
    if any(rank(w) > rank(node) for w in program.writers_of(source.var)):
        return None
    if len(source.slices) != len(dst.slices):
        return None
    shifts = []
    for dim, ((s_start, s_stop), (d_start, d_stop)) in enumerate(zip(source.slices, dst.slices, strict=True)):
        if s_stop - s_start != d_stop - d_start:
            return None
        if s_start != d_start:
            shifts.append((dim, s_start - d_start))
    if len(shifts) > 1:
        return None
    dim, offset = shifts[0] if shifts else (0, 0)
    return Edit(remove=frozenset({node}), renames={dst.var: Rename(source.var, dim, offset)})


def remove(program: Program, *nodes: int) -> Edit | None:
    """Drop ``nodes``: None if a statement outside them reads what they write, or they
    write an HBM tensor or a returned variable (a fragment's statements are its result)."""
    if not nodes or program.fragment:
        return None
    dropped = set(nodes)
    for node in nodes:
        for written in program[node].writes:
            var = written.var
            info = program.variables[var]
            if info.external or var in program.returns:
                return None
            if any(reader not in dropped for reader, _ in program.consumers_of(var)):
                return None
    return Edit(remove=frozenset(dropped))


def replace(program: Program, node: int, statement: Statement) -> Edit:
    """``node``'s statement becomes ``statement`` (verified when the edit is applied)."""
    if not isinstance(statement, Statement):
        raise TransformError(f"replace: statement must be a Statement, got {type(statement).__name__}")
    if node not in program:
        raise TransformError(f"replace: the program has no statement with id {node}")
    return Edit(replace={node: statement})


def insert_before(program: Program, node: int, *statements: Statement) -> Edit:
    """``statements`` placed just before ``node``, in this order (verified when the edit
    is applied; the snapshot is then built in full, every statement keeping its id)."""
    if node not in program:
        raise TransformError(f"insert_before: the program has no statement with id {node}")
    wrong = next((s for s in statements if not isinstance(s, Statement)), None)
    if wrong is not None or not statements:
        got = type(wrong).__name__ if wrong is not None else "none"
        raise TransformError(f"insert_before: statements must be Statements (at least one), got {got}")
    return Edit(insert={node: statements})


def new_name(program: Program, node: int, stem: str = "tile") -> str:
    """A variable name ``program`` does not use, made from statement ``node``'s id: the
    matches of one batch, each inserting at its own statement, never take the same."""
    name, count = f"{stem}_at{node}", 1
    while name in program.variables:
        count += 1
        name = f"{stem}_at{node}_{count}"
    return name


def merge_run(program: Program, nodes: Sequence[int], axis: str) -> Edit | None:
    """Merge ``nodes`` (adjacent along ``axis``, in axis order: a set pattern's
    ``Found.nodes``) into the earliest; None if they are fewer than two."""
    if len(nodes) < 2:
        return None
    return adjacency(program).merge_edit(nodes, axis)


def dedupe(program: Program, keeper: int, *duplicates: int) -> Edit | None:
    """Absorb ``duplicates`` into the earlier ``keeper`` and let their readers read its
    tile: None unless each duplicate is the same statement as the keeper apart from the
    private tile it defines, of the same shape (``EqualPattern`` finds such statements)."""
    kept = program[keeper]
    if not duplicates or len(kept.writes) != 1 or not _private(program, keeper, kept.dst.var):
        return None
    shape, rank = program.variables[kept.dst.var].shape, program.order_key
    renames = {}
    for node in duplicates:
        stmt = program[node]
        if (
            rank(node) <= rank(keeper)
            or (stmt.op, stmt.attrs, stmt.accumulate, stmt.reads)
            != (kept.op, kept.attrs, kept.accumulate, kept.reads)
            or len(stmt.writes) != 1
            or stmt.dst.slices != kept.dst.slices
            or not _private(program, node, stmt.dst.var)
            or program.variables[stmt.dst.var].shape != shape
        ):
            return None
        renames[stmt.dst.var] = Rename(kept.dst.var)
    return Edit(absorb=dict.fromkeys(duplicates, keeper), renames=renames)


def _private(program: Program, node: int, var: str) -> bool:
    """Whether ``var`` is an on-chip tile ``node`` alone writes and nothing returns."""
    info = program.variables.get(var)
    return (
        info is not None
        and not info.external
        and var not in program.returns
        and program.writers_of(var) == (node,)
    )
