"""Synthetic tiled programs of any size, for benchmarks and property tests.

``tiled_matmul(m, k, n)`` builds what tiling ``lhs[K,M].T @ rhs[K,N]`` produces
(seed 001's "Before" shape): per output tile, one load of each operand per K chunk,
a matmul that defines the tile's accumulator and then accumulates into it, an
optional elementwise tail applied once after the accumulation, and one store.
Ragged sizes give a smaller last tile.

>>> p = tiled_matmul(256, 256, 256)
>>> len(p), p.statements_of("store")[:2]
(29, (7, 14))
"""

from __future__ import annotations

from nkigym_graph.ir.ops import ACTIVATION, ALLOC, LOAD, NC_MATMUL, STORE
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Operand, Statement, make_attrs
from nkigym_graph.ir.targets import TRN2, Target
from nkigym_graph.ir.variables import Param


def _tiles(size: int, tile: int) -> list[tuple[int, int]]:
    return [(start, min(start + tile, size)) for start in range(0, size, tile)]


def tiled_matmul_statements(
    m: int, k: int, n: int, tile: int = 128, tail: str | None = None, dtype: str = "float32"
) -> tuple[list[Param], list[Statement]]:
    """Parameters and statements of a tiled ``a[k,m].T @ b[k,n]`` (optionally ``tail(...)``)."""
    stmts = [Statement(ALLOC, (Operand("output", ((0, m), (0, n))),), make_attrs(dtype=dtype))]
    counter = iter(range(10**9))

    def fresh() -> str:
        return f"tensor_{next(counter)}"

    for mi in _tiles(m, tile):
        for ni in _tiles(n, tile):
            acc: str | None = None
            out_tile = ((0, mi[1] - mi[0]), (0, ni[1] - ni[0]))
            for ki in _tiles(k, tile):
                lhs, rhs = fresh(), fresh()
                kk = (0, ki[1] - ki[0])
                stmts.append(Statement(LOAD, (Operand("a", (ki, mi)), Operand(lhs, (kk, out_tile[0])))))
                stmts.append(Statement(LOAD, (Operand("b", (ki, ni)), Operand(rhs, (kk, out_tile[1])))))
                first = acc is None
                acc = fresh() if acc is None else acc
                operands = (
                    Operand(lhs, (kk, out_tile[0])),
                    Operand(rhs, (kk, out_tile[1])),
                    Operand(acc, out_tile),
                )
                stmts.append(Statement(NC_MATMUL, operands, (), not first))
            assert acc is not None
            result = acc
            if tail is not None:
                result = fresh()
                stmts.append(
                    Statement(
                        ACTIVATION, (Operand(acc, out_tile), Operand(result, out_tile)), make_attrs(op=tail)
                    )
                )
            stmts.append(Statement(STORE, (Operand(result, out_tile), Operand("output", (mi, ni)))))
    return [Param("a", (k, m), dtype), Param("b", (k, n), dtype)], stmts


def tiled_matmul(
    m: int,
    k: int,
    n: int,
    tile: int = 128,
    tail: str | None = None,
    dtype: str = "float32",
    target: Target = TRN2,
) -> Program:
    """The tiled matmul program (see the module docstring)."""
    params, stmts = tiled_matmul_statements(m, k, n, tile, tail, dtype)
    return Program("tiled_matmul", params, stmts, "output", target=target)
