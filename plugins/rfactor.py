"""``rfactor``: two-level accumulation -- a long matmul accumulation is split into PSUM
groups of ``g`` K tiles whose partial sums are added up in SBUF.

A matmul accumulates over K in one PSUM tile, which must then stay live (in one of
PSUM's 8 banks) for the whole K loop. Split into groups, each PSUM partial lives for
``g`` K tiles only; the running sum lives in SBUF, which has room for many. That lets a
schedule put the K loop outside the M loop (reusing a K block of the moving operand for
every M block) without holding every output tile of the block in PSUM.

Before (K = 4 tiles)::

    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    tensor_2[0:128, 0:512] += nkigym.nc_matmul(tensor_3, tensor_4)
    tensor_2[0:128, 0:512] += nkigym.nc_matmul(tensor_5, tensor_6)
    tensor_2[0:128, 0:512] += nkigym.nc_matmul(tensor_7, tensor_8)
    output[0:128, 0:512] = tensor_2

After (groups of 2)::

    tensor_2_p0 = nkigym.nc_matmul(tensor_0, tensor_1)
    tensor_2_p0[0:128, 0:512] += nkigym.nc_matmul(tensor_3, tensor_4)
    tensor_2_s0 = nkigym.activation(tensor_2_p0, op="copy")
    tensor_2_p1 = nkigym.nc_matmul(tensor_5, tensor_6)
    tensor_2_p1[0:128, 0:512] += nkigym.nc_matmul(tensor_7, tensor_8)
    tensor_2_s1 = nkigym.tensor_tensor(tensor_2_s0, tensor_2_p1, op="add")
    output[0:128, 0:512] = tensor_2_s1

One match per group size (a power of two below the longest accumulation); it splits
every accumulation longer than its groups. The sum is the same up to rounding (search
checks it numerically like any rewrite).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from nkigym_graph import hookimpl
from nkigym_graph.errors import TransformError
from nkigym_graph.ir.ops import get_op
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.schedule_fit import PSUM_ENGINES
from nkigym_graph.ir.statement import Operand, Statement, make_attrs
from nkigym_graph.ir.variables import fresh_name
from nkigym_graph.rewriting.transform import Edit, Match, Transform


def chains(program: Program) -> Iterator[tuple[str, tuple[int, ...]]]:
    """Each variable accumulated by two or more whole-tile writes of an op whose results
    live in PSUM (a matmul), read only after the last, with its writers in program order."""
    for var, info in program.variables.items():
        if info.external:
            continue
        writers = program.writers_of(var)
        if len(writers) < 2:
            continue
        whole = tuple((0, n) for n in info.shape)
        stmts = [program[w] for w in writers]
        if any(s.op.engine not in PSUM_ENGINES or s.dst.slices != whole for s in stmts):
            continue
        if stmts[0].accumulate or not all(s.accumulate for s in stmts[1:]):
            continue
        last = program.order_key(writers[-1])
        if any(
            program.order_key(node) < last and node not in writers for node, _ in program.consumers_of(var)
        ):
            continue
        yield var, writers


@dataclass(frozen=True)
class GroupMatch(Match):
    """A match that splits accumulations into groups of ``group`` K tiles."""

    group: int = 0


class Rfactor(Transform):
    """Split long PSUM accumulations into groups summed in SBUF (module docstring)."""

    name = "rfactor"
    batched = False
    saturates = False

    def analyze(self, program: Program) -> list[Match]:
        longest = max((len(writers) for _, writers in chains(program)), default=0)
        out: list[Match] = []
        group = 1
        while group * 2 < longest:
            group *= 2
            detail = f"PSUM groups of {group} K tiles, summed in SBUF"
            found_in = program.canonical_hash
            out.append(GroupMatch(self.name, (), Edit(), detail=detail, program_hash=found_in, group=group))
        return out

    def rewrite(self, program: Program, match: Match) -> Program:
        self.check_origin(program, match)
        if not isinstance(match, GroupMatch) or match.group < 1:
            raise TransformError(f"rfactor: {match} is not one of its matches")
        group = match.group
        taken = set(program.variables)
        replaced: dict[int, Statement] = {}
        after: dict[int, list[Statement]] = {}
        renames: dict[str, str] = {}
        copy, add = get_op("activation"), get_op("tensor_tensor")
        for var, writers in chains(program):
            if len(writers) <= group:
                continue
            shape = program.variables[var].shape
            whole = tuple((0, n) for n in shape)
            running = None
            for j, start in enumerate(range(0, len(writers), group)):
                partial = fresh_name(f"{var}_p{j}", taken)
                for i, node in enumerate(writers[start : start + group]):
                    stmt = program[node]
                    operands = (*stmt.operands[:2], Operand(partial, whole))
                    replaced[node] = Statement(stmt.op, operands, stmt.attrs, accumulate=i > 0)
                total = fresh_name(f"{var}_s{j}", taken)
                if running is None:
                    operands = (Operand(partial, whole), Operand(total, whole))
                    summed = Statement(copy, operands, make_attrs(op="copy"))
                else:
                    operands = (Operand(running, whole), Operand(partial, whole), Operand(total, whole))
                    summed = Statement(add, operands, make_attrs(op="add"))
                after.setdefault(writers[min(start + group, len(writers)) - 1], []).append(summed)
                running = total
            assert running is not None
            renames[var] = running
        statements: list[Statement] = []
        ids: list[int] = []  # the statements keep their ids; the sums are new (-1)
        for node, stmt in program.items():
            stmt = replaced.get(node, stmt)
            if any(o.var in renames for o in stmt.operands):
                stmt = stmt.renamed(renames)  # a later chain reads an earlier one's sum
            statements.append(stmt)
            ids.append(node)
            sums = after.get(node, ())
            statements.extend(sums)
            ids.extend([-1] * len(sums))
        return program.rebuilt(statements, ids)


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [Rfactor]
