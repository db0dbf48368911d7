"""The kernel program: a scheduled program rewritten into the statements a kernel runs.

Two rewrites make every kernel instruction a statement, so ordering, buffering and
pricing see exactly what runs (and the result still interprets, and verifies, like
any program):

- **Loads are cut at block boundaries** (after the evictions, which do not depend on
  the blocks and are made once per program). A load spanning several blocks of a blocked
  axis becomes one load per block, each its own tile, and its readers read the piece
  they fall in (a reader straddling a boundary keeps the load whole)::

      tensor_0 = a[0:128, 0:1024]              # blocks=M:512
      ... nkigym.nc_matmul(tensor_0[0:128, 512:640], ...)
    becomes
      tensor_0 = a[0:128, 0:512]
      tensor_0_1 = a[0:128, 512:1024]
      ... nkigym.nc_matmul(tensor_0_1[0:128, 0:128], ...)

- **PSUM results are evicted explicitly.** A Tensor Engine result lives in PSUM; a
  reader that cannot read PSUM (a DMA, the Tensor Engine) or the second PSUM input of a
  Vector Engine op reads an SBUF copy made once, after the last write::

      tensor_2 = nkigym.nc_matmul(...)
      output[0:128, 0:512] = tensor_2
    becomes
      tensor_2 = nkigym.nc_matmul(...)
      tensor_2_sb = nkigym.activation(tensor_2, op="copy")
      output[0:128, 0:512] = tensor_2_sb
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from nkigym_graph.ir.axes import ProgramAxes, program_axes
from nkigym_graph.ir.memo import memo
from nkigym_graph.ir.ops import get_op
from nkigym_graph.ir.program import STATEMENTS_KEY, Program
from nkigym_graph.ir.schedule import ScheduleError
from nkigym_graph.ir.schedule_fit import PSUM_ENGINES
from nkigym_graph.ir.slices import Range, Slices
from nkigym_graph.ir.statement import Operand, Statement, make_attrs

SBUF_READERS = frozenset({"dma", "tensor", "gpsimd"})
"""Engines that cannot read PSUM."""


class KernelProgram(NamedTuple):
    """The prepared program and what the rewrites decided."""

    program: Program
    psum: frozenset[str]
    """Variables living in PSUM."""
    evictions: frozenset[str]
    """Variables the eviction copies write."""
    load_pieces: int
    """Loads added by cutting at block boundaries."""


def prepare(program: Program, blocks: Mapping[str, int]) -> KernelProgram:
    """``program`` with PSUM evictions explicit and loads cut at ``blocks`` boundaries."""
    evicted = memo(program, (STATEMENTS_KEY, "evicted"), _evicted)
    source = evicted.program
    statements, pieces = _cut_loads(source, program_axes(source), blocks, set(source.variables))
    if not pieces:
        return evicted
    return KernelProgram(_with_statements(source, statements), evicted.psum, evicted.evictions, pieces)


def _evicted(program: Program) -> KernelProgram:
    """``program`` with its PSUM evictions explicit (once per list of statements: the
    evictions do not depend on the blocks)."""
    psum = psum_variables(program)
    statements, evictions = _evict(list(program.statements), psum, set(program.variables))
    kernel = _with_statements(program, statements) if evictions else program.with_schedule(None)
    return KernelProgram(kernel, psum, frozenset(evictions), 0)


def _with_statements(program: Program, statements: list[Statement]) -> Program:
    """A program like ``program`` (no schedule) running ``statements``."""
    return Program(
        program.name,
        program.params,
        statements,
        program.returns,
        target=program.target,
        outputs=program.outputs,
        explicit_slices=program.explicit_slices,
    )


def _fresh(stem: str, taken: set[str]) -> str:
    index = 1
    while f"{stem}_{index}" in taken:
        index += 1
    name = f"{stem}_{index}"
    taken.add(name)
    return name


# -- cutting loads ----------------------------------------------------------------------
def _cut_loads(
    program: Program, axes: ProgramAxes, blocks: Mapping[str, int], taken: set[str]
) -> tuple[list[Statement], int]:
    """The statements with every load that spans blocks cut into one load per block."""
    cuts: dict[int, list[tuple[str, Slices, Slices]]] = {}  # load node -> (var, src, dst) pieces
    renames: dict[tuple[str, Slices], tuple[str, Slices]] = {}
    added = 0
    for node in program.statements_of("load"):
        stmt = program[node]
        src, dst = stmt.operands
        if len(program.writers_of(dst.var)) != 1:
            continue
        bounds = _piece_bounds(program, axes, blocks, dst)
        if bounds is None:
            continue
        readers = [program[r].operands[p].slices for r, p in program.consumers_of(dst.var)]
        pieces = _pieces(bounds)
        owner = [_owner(pieces, slices) for slices in readers]
        if any(found is None for found in owner):
            continue  # a reader straddles a boundary: keep the load whole
        names = [dst.var] + [_fresh(dst.var, taken) for _ in pieces[1:]]
        out = []
        for name, piece in zip(names, pieces, strict=True):
            shift = tuple(s0 - d0 for (s0, _), (d0, _) in zip(src.slices, dst.slices, strict=True))
            source = tuple((lo + d, hi + d) for (lo, hi), d in zip(piece, shift, strict=True))
            out.append((name, source, tuple((0, hi - lo) for lo, hi in piece)))
        cuts[node] = out
        added += len(pieces) - 1
        for slices, index in zip(readers, owner, strict=True):
            assert index is not None
            piece = pieces[index]
            local = tuple((lo - p0, hi - p0) for (lo, hi), (p0, _) in zip(slices, piece, strict=True))
            renames[(dst.var, slices)] = (names[index], local)
    if not cuts:
        return list(program.statements), 0
    renamed = {var for var, _ in renames}
    statements: list[Statement] = []
    for node, stmt in program.items():
        cut = cuts.get(node)
        if cut is not None:
            source_var = stmt.operands[0].var
            for name, source, local in cut:
                operands = (Operand(source_var, source), Operand(name, local))
                statements.append(Statement(stmt.op, operands, stmt.attrs, stmt.accumulate))
            continue
        if any(o.var in renamed and (o.var, o.slices) in renames for o in stmt.operands):
            moved = tuple(Operand(*renames.get((o.var, o.slices), o)) for o in stmt.operands)
            stmt = Statement(stmt.op, moved, stmt.attrs, stmt.accumulate)
        statements.append(stmt)
    return statements, added


def _piece_bounds(
    program: Program, axes: ProgramAxes, blocks: Mapping[str, int], dst: Operand
) -> list[list[int]] | None:
    """Per dimension of the loaded tile, its cut points (local, ascending, ends
    included); None when no blocked axis crosses it."""
    bounds = []
    crossed = False
    for index, (start, stop) in enumerate(dst.slices):
        axis = axes.axis_of.get((dst.var, index))
        size = blocks.get(axis) if axis is not None else None
        points = [start, stop]
        if size is not None:
            offset = axes.offset(dst.var, index)
            first = (offset + start) // size + 1
            inner = [b * size - offset for b in range(first, (offset + stop - 1) // size + 1)]
            if inner:
                crossed = True
                points = [start, *inner, stop]
        bounds.append(points)
    return bounds if crossed else None


def _pieces(bounds: Sequence[Sequence[int]]) -> list[Slices]:
    """Every box of the grid the cut points make, in row-major order."""
    out: list[Slices] = [()]
    for points in bounds:
        ranges: list[Range] = list(itertools.pairwise(points))
        out = [(*box, r) for box in out for r in ranges]
    return out


def _owner(pieces: Sequence[Slices], slices: Slices) -> int | None:
    for index, piece in enumerate(pieces):
        if all(p0 <= lo and hi <= p1 for (lo, hi), (p0, p1) in zip(slices, piece, strict=True)):
            return index
    return None


# -- evictions --------------------------------------------------------------------------
def psum_variables(program: Program) -> frozenset[str]:
    """On-chip variables written only by PSUM engines."""
    found = set()
    for var, info in program.variables.items():
        if info.external or info.defined_by is None:
            continue
        writers = program.writers_of(var)
        if writers and all(program[w].op.engine in PSUM_ENGINES for w in writers):
            found.add(var)
    return frozenset(found)


def _evict(
    statements: list[Statement], psum: frozenset[str], taken: set[str]
) -> tuple[list[Statement], set[str]]:
    """The statements with an SBUF copy of each PSUM variable some reader needs in SBUF."""
    last_write: dict[str, int] = {}
    needs: dict[str, list[tuple[int, int]]] = {}
    for node, stmt in enumerate(statements):
        for position, operand in stmt.read_items():
            if (
                operand.var in psum
                and position not in stmt.op.write_positions
                and _needs_sbuf(stmt, position, psum)
            ):
                needs.setdefault(operand.var, []).append((node, position))
        for position in stmt.op.write_positions:
            var = stmt.operands[position].var
            if var in psum:
                last_write[var] = node
    if not needs:
        return statements, set()
    copies: dict[str, str] = {}
    after: dict[int, list[Statement]] = {}
    copy_op = get_op("activation")
    shapes = _shapes(statements, set(needs))
    for var in sorted(needs):
        readers = needs[var]
        if min(node for node, _ in readers) < last_write[var]:
            raise ScheduleError(f"{var} is read from SBUF between its PSUM writes; cannot evict it once")
        copy = copies[var] = _fresh(f"{var}_sb", taken)
        shape = shapes[var]
        whole = tuple((0, n) for n in shape)
        stmt = Statement(copy_op, (Operand(var, whole), Operand(copy, whole)), make_attrs(op="copy"))
        after.setdefault(last_write[var], []).append(stmt)
    swap = {(node, position) for readers in needs.values() for node, position in readers}
    out: list[Statement] = []
    for node, stmt in enumerate(statements):
        if any((node, p) in swap for p in range(len(stmt.operands))):
            operands = tuple(
                Operand(copies[o.var], o.slices) if (node, p) in swap else o
                for p, o in enumerate(stmt.operands)
            )
            stmt = Statement(stmt.op, operands, stmt.attrs, stmt.accumulate)
        out.append(stmt)
        out.extend(after.get(node, ()))
    return out, set(copies.values())


def _needs_sbuf(stmt: Statement, position: int, psum: frozenset[str]) -> bool:
    """Whether read ``position`` of ``stmt`` must come from SBUF: its engine cannot read
    PSUM, or it is a second PSUM input (at most one per instruction)."""
    if stmt.op.engine in SBUF_READERS:
        return True
    earlier = [p for p in stmt.op.read_positions if p < position and stmt.operands[p].var in psum]
    return bool(earlier)


def _shapes(statements: Sequence[Statement], wanted: set[str]) -> dict[str, tuple[int, ...]]:
    """The shape of each variable of ``wanted`` (the stops of its first write)."""
    found: dict[str, tuple[int, ...]] = {}
    for stmt in statements:
        if not stmt.op.write_positions:
            continue
        dst = stmt.operands[stmt.op.write_positions[0]]
        if dst.var in wanted and dst.var not in found:
            found[dst.var] = tuple(stop for _, stop in dst.slices)
    missing = sorted(wanted - set(found))
    if missing:
        raise ScheduleError(f"{missing[0]} is never written")
    return found
