"""Programs for the weight-stitching and circular-buffer tests.

``weights_program`` builds the tiled program of ``x[K, M].T @ w_i[K_i, N_i]`` for each
weight, all sharing the activation ``x`` (``w_i`` reads its first ``K_i`` rows), with
an optional activation tail per weight, written side by side into one output
``[M, sum N_i]`` (or into one output per weight). Tiles follow the target's tile sizes,
K chunks accumulate. ``reference`` computes the same in numpy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from nkigym_graph import Program
from nkigym_graph.ir.functions import UNARY
from nkigym_graph.ir.ops import ACTIVATION, ALLOC, LOAD, NC_MATMUL, STORE
from nkigym_graph.ir.statement import Operand, Statement, make_attrs
from nkigym_graph.ir.targets import WORMHOLE_B0, Target
from nkigym_graph.ir.variables import Param


class W(NamedTuple):
    """One weight: name, ``[K, N]`` and dtype."""

    name: str
    k: int
    n: int
    dtype: str = "float64"


def _chunks(size: int, tile: int) -> Iterator[tuple[int, int]]:
    for start in range(0, size, tile):
        yield (start, min(start + tile, size))


def weights_program(
    weights: Sequence[W],
    m: int = 32,
    tail: str | None = None,
    separate_outputs: bool = False,
    target: Target = WORMHOLE_B0,
    x_dtype: str = "float64",
) -> Program:
    """The program of the module docstring."""
    k_max = max(w.k for w in weights)
    total_n = sum(w.n for w in weights)
    k_tile, n_tile = target.tile_sizes["K"], target.tile_sizes["N"]
    counter = iter(range(10**6))
    outputs = [f"out_{w.name}" for w in weights] if separate_outputs else ["output"]
    stmts = [
        Statement(
            ALLOC,
            (Operand(out, ((0, m), (0, w.n if separate_outputs else total_n))),),
            make_attrs(dtype="float64"),
        )
        for out, w in zip(outputs, weights if separate_outputs else weights[:1], strict=True)
    ]
    offset = 0
    for i, w in enumerate(weights):
        out = outputs[i] if separate_outputs else outputs[0]
        base = 0 if separate_outputs else offset
        for n0, n1 in _chunks(w.n, n_tile):
            acc = f"tensor_{next(counter)}"
            for step, (k0, k1) in enumerate(_chunks(w.k, k_tile)):
                lhs, rhs = f"tensor_{next(counter)}", f"tensor_{next(counter)}"
                kk = (0, k1 - k0)
                stmts.append(Statement(LOAD, (Operand("x", ((k0, k1), (0, m))), Operand(lhs, (kk, (0, m))))))
                stmts.append(
                    Statement(LOAD, (Operand(w.name, ((k0, k1), (n0, n1))), Operand(rhs, (kk, (0, n1 - n0)))))
                )
                operands = (
                    Operand(lhs, (kk, (0, m))),
                    Operand(rhs, (kk, (0, n1 - n0))),
                    Operand(acc, ((0, m), (0, n1 - n0))),
                )
                stmts.append(Statement(NC_MATMUL, operands, (), step > 0))
            result = acc
            if tail is not None:
                result = f"tensor_{next(counter)}"
                region = ((0, m), (0, n1 - n0))
                stmts.append(
                    Statement(
                        ACTIVATION, (Operand(acc, region), Operand(result, region)), make_attrs(op=tail)
                    )
                )
            stmts.append(
                Statement(
                    STORE,
                    (Operand(result, ((0, m), (0, n1 - n0))), Operand(out, ((0, m), (base + n0, base + n1)))),
                )
            )
        offset += w.n
    params = [Param("x", (k_max, m), x_dtype)] + [Param(w.name, (w.k, w.n), w.dtype) for w in weights]
    return Program("weights", params, stmts, outputs, target=target)


def random_inputs(program: Program, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random standard-normal inputs of every parameter, in its dtype."""
    return {p.name: rng.standard_normal(p.shape).astype(p.dtype) for p in program.params}


def reference(
    inputs: Mapping[str, np.ndarray], weights: Sequence[W], tail: str | None = None
) -> list[np.ndarray]:
    """numpy's ``tail(x[:K_i].T @ w_i)`` per weight, in float64."""
    x = inputs["x"].astype(np.float64)
    results = []
    for w in weights:
        value = x[: w.k].T @ inputs[w.name].astype(np.float64)
        results.append(UNARY[tail](value) if tail is not None else value)
    return results
