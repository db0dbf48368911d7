"""``scale_after_matmul``: a per-row scale moves past the matmul it feeds through a
transpose, ``rowscale(x) @ w = rowscale(x @ w)``.

A matmul whose left operand is a normalised tensor (``rmsnorm(x) @ w``: each row of
``x`` times its ``rstd``) reads it transposed on chip, so every transpose waits for its
row's scale, which waits for the reduction over the whole row. Scaling the product's
rows instead lets the transposes start straight from the loads, and the scale is one
``tensor_scalar`` with a per-partition operand when the product leaves PSUM (the
eviction the kernel makes anyway). The ops that scale rows say so
(``TensorColumnOp.scales_rows``: multiply, divide).

Before (one 128-row block, K = 2 tiles)::

    tensor_5 = nkigym.tensor_scalar(tensor_0, tensor_4, op="multiply")    # rows times rstd
    tensor_6 = nkigym.nc_transpose(tensor_5[0:128, 0:128])
    tensor_8 = nkigym.nc_matmul(tensor_6, tensor_7)
    tensor_9 = nkigym.nc_transpose(tensor_5[0:128, 128:256])
    tensor_8[0:128, 0:512] += nkigym.nc_matmul(tensor_9, tensor_10)
    output[0:128, 0:512] = tensor_8

After::

    tensor_6 = nkigym.nc_transpose(tensor_0[0:128, 0:128])
    tensor_8 = nkigym.nc_matmul(tensor_6, tensor_7)
    tensor_9 = nkigym.nc_transpose(tensor_0[0:128, 128:256])
    tensor_8[0:128, 0:512] += nkigym.nc_matmul(tensor_9, tensor_10)
    tensor_8_scaled = nkigym.tensor_scalar(tensor_8, tensor_4, op="multiply")
    output[0:128, 0:512] = tensor_8_scaled

A transpose is rewritten only if every matmul reading it accumulates a product whose
every K step reads a transpose of rows scaled by the same column (so one scale of the
product's rows is right for all of them); scaled tiles nothing reads any more are
dropped. One match rewrites every such transpose of the program. The product is the
same up to rounding (search checks it numerically like any rewrite).
"""

from __future__ import annotations

from typing import NamedTuple

from nkigym_graph import hookimpl
from nkigym_graph.errors import TransformError
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.slices import Slices
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.ir.variables import fresh_name
from nkigym_graph.rewriting.transform import Edit, Match, Transform

TRANSPOSE, MATMUL = "nc_transpose", "nc_matmul"


class _Scaled(NamedTuple):
    """A transpose of row-scaled data: the scaling statement, its unscaled data, and
    how the transpose's columns (the product's rows) map onto the scale's column."""

    scaling: int
    data: Operand
    """The transpose's operand, read from the unscaled data instead."""
    column: str
    offset: int
    """Column row = offset + the transpose's column (its data's partition)."""


class _Product(NamedTuple):
    """An accumulated matmul product whose rows can be scaled after the fact."""

    writers: tuple[int, ...]
    transposes: tuple[int, ...]
    column: str
    offset: int
    """Column row = offset + the product's row."""


def _scaled_transpose(program: Program, node: int) -> _Scaled | None:
    """What transpose ``node`` reads, if it is a whole tile of row-scaled data."""
    (data,) = (program[node].operands[p] for p in program[node].op.read_positions)
    writers = program.writers_of(data.var)
    if len(writers) != 1:
        return None
    scaling = program[writers[0]]
    scales_rows = getattr(scaling.op, "scales_rows", None)
    if scales_rows is None or scaling.accumulate or not scales_rows(scaling.attrs):
        return None
    source, column, dst = scaling.operands
    if dst.slices != _whole(program, dst.var):
        return None
    (p0, p1), (f0, f1) = data.slices
    (s0, _), (t0, _) = source.slices
    unscaled = Operand(source.var, ((s0 + p0, s0 + p1), (t0 + f0, t0 + f1)))
    return _Scaled(writers[0], unscaled, column.var, column.slices[0][0] + p0)


def _product(program: Program, var: str, scaled: dict[int, _Scaled]) -> _Product | None:
    """``var``'s accumulation, if every K step reads a transpose of rows scaled alike."""
    info = program.variables[var]
    writers = program.writers_of(var)
    if info.external or not writers:
        return None
    whole = _whole(program, var)
    found: set[tuple[str, int]] = set()
    transposes = []
    for node in writers:
        stmt = program[node]
        if stmt.op.name != MATMUL or stmt.dst.slices != whole or stmt.accumulate != (node != writers[0]):
            return None
        stationary = stmt.operands[0]
        sources = program.writers_of(stationary.var)
        if len(sources) != 1 or sources[0] not in scaled:
            return None
        source = sources[0]
        (_, _), (b0, _) = stationary.slices
        found.add((scaled[source].column, scaled[source].offset + b0 - stmt.dst.slices[0][0]))
        transposes.append(source)
    rank = program.order_key
    if len(found) != 1 or any(
        rank(n) < rank(writers[-1]) and n not in writers for n, _ in program.consumers_of(var)
    ):
        return None
    ((column, offset),) = found
    return _Product(writers, tuple(transposes), column, offset)


def commutable(program: Program) -> tuple[dict[int, _Scaled], dict[str, _Product]]:
    """The transposes to read unscaled data and the products to scale (module docstring)."""
    scaled = {}
    for node in program.statements_of(TRANSPOSE):
        found = _scaled_transpose(program, node)
        readers = program.consumers_of(program[node].dst.var)
        if found is not None and readers and all(program[r].op.name == MATMUL and p == 0 for r, p in readers):
            scaled[node] = found
    while True:
        products: dict[str, _Product] = {}
        for var in {
            program[r].dst.var for node in scaled for r, _ in program.consumers_of(program[node].dst.var)
        }:
            product = _product(program, var, scaled)
            if product is not None:
                products[var] = product
        kept = {
            node: found
            for node, found in scaled.items()
            if all(program[r].dst.var in products for r, _ in program.consumers_of(program[node].dst.var))
        }
        if len(kept) == len(scaled):
            return scaled, products
        scaled = kept


class ScaleAfterMatmul(Transform):
    """Scale a matmul's product rows instead of its transposed operand's (module docstring)."""

    name = "scale_after_matmul"
    batched = False

    def analyze(self, program: Program) -> list[Match]:
        scaled, products = commutable(program)
        if not products:
            return []
        detail = (
            f"{len(products)} product(s) scaled after the matmul, {len(scaled)} transpose(s) of unscaled rows"
        )
        nodes = tuple(program.in_order(scaled))
        return [Match(self.name, nodes, Edit(), detail=detail, program_hash=program.canonical_hash)]

    def rewrite(self, program: Program, match: Match) -> Program:
        self.check_origin(program, match)
        scaled, products = commutable(program)
        if not products or tuple(program.in_order(scaled)) != match.nodes:
            raise TransformError(f"{self.name}: {match} is not one of its matches")
        taken = set(program.variables)
        renames: dict[str, str] = {}
        after: dict[int, Statement] = {}
        for var, product in sorted(products.items()):
            scaling = program[scaled[product.transposes[0]].scaling]
            rows = program.variables[var].shape[0]
            column = Operand(product.column, ((product.offset, product.offset + rows), (0, 1)))
            renames[var] = fresh_name(f"{var}_scaled", taken)
            whole = _whole(program, var)
            operands = (Operand(var, whole), column, Operand(renames[var], whole))
            after[product.writers[-1]] = Statement(scaling.op, operands, scaling.attrs)
        statements: list[Statement] = []
        kept_readers = _readers_left(program, scaled)
        writers = {node for product in products.values() for node in product.writers}
        for node, stmt in program.items():
            if node in scaled:
                stmt = Statement(stmt.op, (scaled[node].data, stmt.dst), stmt.attrs, stmt.accumulate)
            elif node in kept_readers and not kept_readers[node]:
                continue  # a scaled tile nothing reads any more
            elif node not in writers and any(o.var in renames for o in stmt.operands):
                stmt = stmt.renamed(renames)
            statements.append(stmt)
            if node in after:
                statements.append(after[node])
        return program.replace(statements=statements)


def _readers_left(program: Program, scaled: dict[int, _Scaled]) -> dict[int, bool]:
    """For each scaling statement: whether something other than a rewritten transpose reads it."""
    out: dict[int, bool] = {}
    for found in scaled.values():
        var = program[found.scaling].dst.var
        out[found.scaling] = any(node not in scaled for node, _ in program.consumers_of(var))
    return out


def _whole(program: Program, var: str) -> Slices:
    return tuple((0, n) for n in program.variables[var].shape)


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [ScaleAfterMatmul]
