"""Printing programs in the seeds' tiled-program format.

Parameters and outputs are always sliced explicitly (``a[0:128, 0:128]``); an on-chip
tile read whole prints as its bare name unless the program uses the explicit style
(seed 002 writes ``tensor_0[0:128, 0:128]`` for a whole 128x128 tile); a statement
that defines a tile prints its bare name; accumulation prints ``+=``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from nkigym_graph.ir.slices import format_slices
from nkigym_graph.ir.statement import Statement
from nkigym_graph.ir.variables import INTERMEDIATE, Variable

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

INDENT = "    "


def format_statement(program: Program, node: int) -> str:
    """One statement's line (no indentation); ``node`` is its id."""
    return format_statement_in(program.__getitem__, program.variables, program.explicit_slices, node)


def format_statement_in(
    statement_of: Callable[[int], Statement], variables: Mapping[str, Variable], explicit: bool, node: int
) -> str:
    """Statement ``node`` (``statement_of(node)``) with the variable table ``variables``
    (whose ``defined_by`` name statements as ``node`` does)."""
    stmt = statement_of(node)

    def operand(position: int) -> str:
        var, slices = stmt.operands[position]
        info = variables.get(var)
        if (
            info is not None
            and info.kind == INTERMEDIATE
            and not explicit
            and all(
                start == 0 and stop == size for (start, stop), size in zip(slices, info.shape, strict=False)
            )
            and len(slices) == len(info.shape)
        ):
            return var
        return f"{var}[{format_slices(slices)}]"

    dst_var, dst_slices = stmt.dst
    info = variables.get(dst_var)
    defines = stmt.op.name == "alloc" or (
        info is not None and info.defined_by == node and not stmt.accumulate
    )
    if info is None and not stmt.accumulate:  # while the variable table is being built
        defines = all(start == 0 for start, _ in dst_slices) and stmt.op.name != "store"
    dst = dst_var if defines else f"{dst_var}[{format_slices(dst_slices)}]"
    return stmt.op.format(stmt, operand, dst)


def format_program(program: Program) -> str:
    """The whole program: ``def name(params):``, the statements, ``return``.

    A fragment prints its statements only. A blank line follows every store, so the
    tiles of a tiled program read as separate blocks.
    """
    lines: list[str] = []
    indent = "" if program.fragment else INDENT
    if not program.fragment:
        if program.schedule is not None:
            lines.append(f'@nkigym.schedule("{program.schedule}")')
        lines.append(f"def {program.name}({', '.join(p.name for p in program.params)}):")
    previous_store = False
    statement_of = dict(program.items()).__getitem__
    for node, stmt in program.items():
        if previous_store and stmt.op.name != "store":
            lines.append("")
        lines.append(
            indent + format_statement_in(statement_of, program.variables, program.explicit_slices, node)
        )
        previous_store = stmt.op.name == "store"
        if stmt.op.name == "alloc":
            lines.append("")
    if not program.fragment:
        if lines[-1]:
            lines.append("")
        lines.append(f"{INDENT}return {', '.join(program.returns)}")
    return "\n".join(lines) + "\n"
