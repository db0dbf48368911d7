"""The variable table of a program: every tensor's kind, shape and dtype.

Kinds: ``param`` (an HBM input), ``output`` (an HBM tensor the program writes:
allocated by ``nkigym.ndarray``, or implicit in a fragment) and ``intermediate``
(an on-chip tile, defined by its first write, which must cover it from 0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from nkigym_graph.errors import VerificationError
from nkigym_graph.ir.statement import Statement

PARAM = "param"
OUTPUT = "output"
INTERMEDIATE = "intermediate"


class Param(NamedTuple):
    """An HBM tensor of the program's signature."""

    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    space: str = "hbm"
    """``hbm`` for kernel inputs; ``sbuf`` for a fragment's on-chip inputs."""


def fresh_name(stem: str, taken: set[str]) -> str:
    """``stem``, or ``stem_1``, ``stem_2``, ... whichever is not in ``taken`` first; it is
    added to ``taken``.

    >>> taken = {"t", "t_1"}
    >>> fresh_name("t", taken), fresh_name("u", taken), sorted(taken)
    ('t_2', 'u', ['t', 't_1', 't_2', 'u'])
    """
    name, suffix = stem, 0
    while name in taken:
        suffix += 1
        name = f"{stem}_{suffix}"
    taken.add(name)
    return name


class Variable(NamedTuple):
    """One tensor variable of a program."""

    name: str
    kind: str
    shape: tuple[int, ...]
    dtype: str | None
    defined_by: int | None
    """Node that allocates or first writes it (None for parameters and implicit outputs)."""
    external: bool = True
    """Lives in HBM rather than in an on-chip buffer."""


def build_variables(
    params: Sequence[Param],
    outputs: Sequence[Param],
    statements: Sequence[Statement],
    describe: Callable[[int], str],
    write_counts: dict[str, int] | None = None,
) -> dict[str, Variable]:
    """Walk the statements once and classify every variable they write.

    ``describe(node)`` renders a statement for error messages; ``write_counts``, if
    given, is filled with the number of statements writing each variable.
    """
    table: dict[str, Variable] = {}
    counts = write_counts if write_counts is not None else {}
    for p in params:
        if p.name in table:
            raise VerificationError("duplicate_parameter", f"parameter {p.name!r} is declared twice")
        table[p.name] = Variable(p.name, PARAM, tuple(p.shape), p.dtype, None, p.space == "hbm")
    for o in outputs:
        if o.name in table:
            raise VerificationError("duplicate_parameter", f"output {o.name!r} clashes with a parameter")
        table[o.name] = Variable(o.name, OUTPUT, tuple(o.shape), o.dtype, None)
    for node, stmt in enumerate(statements):
        op = stmt.op
        if len(stmt.operands) != len(op.operand_names):
            check_arity(stmt, node, describe)
        for position in op.write_positions:
            known = table.get(stmt.operands[position][0])
            if known is not None and known.kind == INTERMEDIATE and op.name != "alloc":  # written again
                counts[known.name] += 1
            else:
                record_write(table, counts, node, stmt, position, describe)
    return table


def check_arity(stmt: Statement, node: int, describe: Callable[[int], str]) -> None:
    """Rule ``arity``: one operand per operand name of the op."""
    op = stmt.op
    if len(stmt.operands) != len(op.operand_names):
        raise VerificationError(
            "arity",
            f"{op.name} takes {len(op.operand_names)} operands "
            f"({', '.join(op.operand_names)}), got {len(stmt.operands)}",
            describe(node),
        )


def record_write(
    table: dict[str, Variable],
    counts: dict[str, int],
    node: int,
    stmt: Statement,
    position: int,
    describe: Callable[[int], str],
) -> None:
    """Count the write of ``stmt``'s operand ``position``; its first write defines the variable."""
    op = stmt.op
    var, slices = stmt.operands[position]
    known = table.get(var)
    if known is not None:
        counts[var] = counts.get(var, 0) + 1
        if known.kind == PARAM:
            raise VerificationError("write_to_parameter", f"parameter {var!r} is read-only", describe(node))
        if op.name == "alloc":
            raise VerificationError("redefinition", f"{var!r} is already defined", describe(node))
        return
    if any(start for start, _ in slices):
        raise VerificationError(
            "definition",
            f"the first write of {var!r} must define the whole tensor (slices from 0)",
            describe(node),
        )
    counts[var] = 1
    shape = tuple(stop for _, stop in slices)
    if op.name == "alloc":
        table[var] = Variable(var, OUTPUT, shape, stmt.attr("dtype"), node)
    else:
        table[var] = Variable(var, INTERMEDIATE, shape, None, node, external=False)
