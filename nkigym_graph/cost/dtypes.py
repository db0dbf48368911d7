"""Element types of a program's tiles, for byte counts.

On-chip tiles carry no declared dtype; ``tile_dtypes`` propagates them: parameters and
outputs have theirs, a tile takes the dtype an op's table entry fixes (a matmul
accumulates in fp32) or else that of its first read operand.
"""

from __future__ import annotations

from collections.abc import Mapping

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Statement

DEFAULT_DTYPE = "float32"


def dtype_of(program: Program, var: str, fixed: Mapping[str, str], known: dict[str, str]) -> str:
    """The dtype of one variable, by the rule of ``tile_dtypes``, following only the
    statements it depends on; ``known`` memoizes (and may be shared across calls)."""
    chain = []
    while var not in known:
        info = program.variables.get(var)
        if info is None or info.dtype or info.defined_by is None:
            known[var] = (info.dtype if info is not None else None) or DEFAULT_DTYPE
            break
        stmt = program[info.defined_by]
        pinned = fixed.get(stmt.op.name)
        first = _first_read(stmt)
        if pinned is not None or first is None:
            known[var] = pinned or DEFAULT_DTYPE
            break
        chain.append(var)
        var = first
    for link in reversed(chain):
        known[link] = known[var]
    return known[chain[0]] if chain else known[var]


def _first_read(stmt: Statement) -> str | None:
    """The variable of ``stmt.reads[0]`` (without building ``reads``), or None."""
    op = stmt.op
    if op.read_positions:
        return stmt.operands[op.read_positions[0]].var
    if stmt.accumulate and op.write_positions:
        return stmt.operands[op.write_positions[0]].var
    return None


def tile_dtypes(program: Program, fixed: Mapping[str, str]) -> dict[str, str]:
    """The dtype of every variable of ``program``; ``fixed[op name]`` pins an op's result."""
    out: dict[str, str] = {name: info.dtype for name, info in program.variables.items() if info.dtype}
    for stmt in program.statements:
        var = stmt.dst.var
        if var in out:
            continue
        pinned = fixed.get(stmt.op.name)
        if pinned is None:
            reads = stmt.reads
            pinned = out.get(reads[0].var, DEFAULT_DTYPE) if reads else DEFAULT_DTYPE
        out[var] = pinned
    return out
