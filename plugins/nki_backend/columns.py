"""Splitting wide elementwise work into column pieces, for engine balance and overlap.

A row tile's epilogue -- the statements from the last reduction to the store -- runs
as one instruction per statement over the whole row: one engine does all of each, and
the store waits for the last of them. Split into column pieces, the pieces of one
statement go to different engines (``emit(..., reorder=True)`` balances them, see
:mod:`.engines`) and the first piece's store starts while later pieces compute::

    t = tensor_scalar(e, r, op="multiply")    t_c0 = tensor_scalar(e[0:128, 0:1024], r, ...)
    output[0:128, 0:4096] = t           ->    output[0:128, 0:1024] = t_c0
                                              t_c1 = tensor_scalar(e[0:128, 1024:2048], r, ...)
                                              output[0:128, 1024:2048] = t_c1
                                              ...

A statement is split when it is elementwise along its free axis (a load, a store,
``tensor_scalar`` / ``tensor_column``, ``tensor_tensor`` / ``tensor_row``, an
``activation``) and every reader of its result is split too, so a chain ending in a
store splits from the store upwards and stops at a reduction (which reads whole
rows). Pieces read their pieces of split inputs, column slices of other full-width
inputs (a ``[1, F]`` row included) and ``[P, 1]`` columns whole. The same bytes are
moved and the same values computed, piece by piece.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.ir.variables import fresh_name

ELEMENTWISE = frozenset(
    {
        "load",
        "store",
        "tensor_scalar",
        "tensor_column",
        "tensor_tensor",
        "tensor_row",
        "activation",
        "activation_bias",
    }
)
"""Ops whose every output column depends on the same column of their full-width inputs."""
MIN_PIECE_COLUMNS = 512
"""Narrowest piece: below this the instructions' fixed costs outweigh the overlap."""

Bounds = tuple[int, int]


def column_pieces(width: int, pieces: int) -> list[Bounds]:
    """``width`` columns cut into at most ``pieces`` near-equal pieces of at least
    ``MIN_PIECE_COLUMNS`` (one piece when the row is narrower than two)."""
    count = max(1, min(pieces, width // MIN_PIECE_COLUMNS))
    edges = [width * i // count for i in range(count + 1)]
    return list(itertools.pairwise(edges))


def split_columns(program: Program, pieces: int, only: Collection[int] | None = None) -> Program:
    """``program`` with every splittable statement (module docstring) cut into up to
    ``pieces`` column pieces (``only``: those of these statements); unchanged when none is."""
    chosen = _splittable(program, pieces)
    if only is not None:
        chosen = {node: bounds for node, bounds in chosen.items() if node in only}
    if not chosen:
        return program
    taken = set(program.variables)
    names: dict[str, list[str]] = {}
    statements: list[Statement] = []
    for node, stmt in program.items():
        bounds = chosen.get(node)
        if bounds is None:
            statements.append(stmt)
            continue
        dst = stmt.dst
        external = program.variables[dst.var].external
        if not external:
            names[dst.var] = [fresh_name(f"{dst.var}_c{i}", taken) for i in range(len(bounds))]
        for index, (c0, c1) in enumerate(bounds):
            operands = list(stmt.operands)
            for position, operand in enumerate(stmt.operands):
                if position in stmt.op.write_positions:
                    operands[position] = (
                        _columns(operand, c0, c1)
                        if external
                        else Operand(names[dst.var][index], _local(operand, c1 - c0))
                    )
                else:
                    operands[position] = _piece_read(operand, names, index, c0, c1, _width(dst))
            statements.append(stmt._replace(operands=tuple(operands)))
    return program.replace(statements=statements)


def store_chains(program: Program) -> set[int]:
    """The statements of the elementwise chains that end in stores (module docstring):
    elementwise along the free axis, every reader of the result in a chain too."""
    chained: set[int] = set()
    for node, stmt in reversed(list(program.items())):
        if stmt.op.name not in ELEMENTWISE or stmt.accumulate or len(stmt.dst.slices) != 2:
            continue
        if not _pieces_read_alike(program, stmt):
            continue
        var = stmt.dst.var
        if not program.variables[var].external:
            if program.writers_of(var) != (node,) or var in program.returns:
                continue
            readers = program.consumers_of(var)
            if not readers or any(
                r not in chained
                or program[r].operands[p].slices != stmt.dst.slices
                or _width(program[r].dst) != _width(stmt.dst)
                for r, p in readers
            ):
                continue
        chained.add(node)
    return chained


def _splittable(program: Program, pieces: int) -> dict[int, list[Bounds]]:
    """Node -> its column pieces, for every statement that splits."""
    chosen: dict[int, list[Bounds]] = {}
    for node in program.in_order(store_chains(program)):
        bounds = column_pieces(_width(program[node].dst), pieces)
        if len(bounds) > 1:
            chosen[node] = bounds
    return chosen


def _pieces_read_alike(program: Program, stmt: Statement) -> bool:
    """Every read is full width (rows included) or a ``[P, 1]`` column."""
    width = _width(stmt.dst)
    for position in stmt.op.read_positions:
        operand = stmt.operands[position]
        if len(operand.slices) != 2:
            return False
        if _width(operand) != width and not (_width(operand) == 1 and _rows(operand) == _rows(stmt.dst)):
            return False
    return True


def _piece_read(
    operand: Operand, names: dict[str, list[str]], index: int, c0: int, c1: int, width: int
) -> Operand:
    if operand.var in names:
        return Operand(names[operand.var][index], _local(operand, c1 - c0))
    if _width(operand) == width:
        return _columns(operand, c0, c1)
    return operand  # a [P, 1] column, read whole by every piece


def _columns(operand: Operand, c0: int, c1: int) -> Operand:
    (r0, r1), (f0, _) = operand.slices
    return Operand(operand.var, ((r0, r1), (f0 + c0, f0 + c1)))


def _local(operand: Operand, width: int) -> tuple[Bounds, Bounds]:
    (r0, r1), _ = operand.slices
    return ((0, r1 - r0), (0, width))


def _width(operand: Operand) -> int:
    return operand.slices[-1][1] - operand.slices[-1][0]


def _rows(operand: Operand) -> int:
    return operand.slices[0][1] - operand.slices[0][0]
