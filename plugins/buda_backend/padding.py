"""Tile padding the netlist would sum, refused where an op makes it non-finite.

Queues pad every tensor to whole 32 x 32 tiles with zeros, and the netlist reduces rows
and contracts ``K`` as matmuls that multiply the padding by zeros (a column of ones
shorter than the tile, the other operand's zero padding). That is exact while the
padding is finite. An op that turns the zeros into ``-inf``, ``inf`` or nan (``log``,
``reciprocal``, ``rsqrt``, a ``sqrt`` of a shifted value) makes those products nan,
which would spread into the real outputs. ``check_padding`` follows the padding value of
every variable through the program (each op's own semantics applied to it; an operand
spread from one row or column contributes a real value there, not its padding) and
refuses a contraction over a padded axis of a variable whose padding is not finite.

>>> import nkigym_graph as ng
>>> def f(x):
...     return ng.tensor_reduce(ng.activation(x, op="log"), op="sum")
>>> check_padding(ng.tile(f, {"x": (32, 64)}, target=ng.WORMHOLE_B0))  # no padding: fine
>>> check_padding(ng.tile(f, {"x": (32, 33)}, target=ng.WORMHOLE_B0))
Traceback (most recent call last):
...
ValueError: statement `...`: it sums 1 column(s) of ..., and the netlist would add the tile padding, ...
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Statement

from .shapes import TILE

SPREAD = "broadcast"
"""The axis label of an operand dimension an op spreads (``Op.axes``): not summed."""
REAL = 1.0
"""What an operand spread from one row or column contributes to the padding: one of its
real values (the spread copies them, never its own padding)."""


def check_padding(program: Program) -> None:
    """``ValueError`` naming the first statement that contracts a padded axis of a
    variable whose padding an op made non-finite (see the module docstring)."""
    pad: dict[str, float] = {}
    for node, stmt in program.items():
        reads = [stmt.operands[p] for p in stmt.op.read_positions]
        values = [pad.get(operand.var, 0.0) for operand in reads]
        contracted = _contracted(stmt)
        for index, (operand, value) in enumerate(zip(reads, values, strict=True)):
            for dim in contracted.get(index, ()):
                extent = operand.slices[dim][1] - operand.slices[dim][0]
                if extent % TILE and not math.isfinite(value):
                    raise ValueError(
                        f"statement `{program.describe(node)}`: it sums {extent} "
                        f"{'column(s)' if dim else 'row(s)'} of {operand.var!r}, and the netlist would "
                        f"add the tile padding, where an op made {value} (which times 0 is nan); "
                        f"pad the tensor to a multiple of {TILE} {'columns' if dim else 'rows'}"
                    )
        result = _padding_of(stmt, values, bool(contracted))
        dst = stmt.dst.var
        pad[dst] = pad.get(dst, 0.0) + result if stmt.accumulate else result


def _contracted(stmt: Statement) -> dict[int, list[int]]:
    """Per read operand (in ``read_positions`` order), the dimensions whose axis label the
    result does not have, spread ones aside: the ones the op sums over."""
    op = stmt.op
    if not op.axes:
        return {}
    kept = {label for position in op.write_positions for label in op.axes[position]}
    found: dict[int, list[int]] = {}
    for index, position in enumerate(op.read_positions):
        labels = op.axes[position] if position < len(op.axes) else ()
        dims = [dim for dim, label in enumerate(labels) if label not in kept and label != SPREAD]
        if dims:
            found[index] = dims
    return found


def _padding_of(stmt: Statement, values: Sequence[float], contracts: bool) -> float:
    """The padding of ``stmt``'s result given its operands' paddings ``values``."""
    if contracts:  # sums of padding products: finite (zero) while every operand's is
        return 0.0 if all(math.isfinite(v) for v in values) else math.nan
    op, dst = stmt.op, stmt.dst
    inputs = []
    for position, value in zip(op.read_positions, values, strict=True):
        operand = stmt.operands[position]
        spread = any(
            hi - lo == 1 < d_hi - d_lo
            for (lo, hi), (d_lo, d_hi) in zip(operand.slices, dst.slices, strict=False)
        )
        inputs.append(np.full((1, 1), REAL if spread else value))
    if not inputs:
        return 0.0
    with np.errstate(all="ignore"):
        result = op.compute(inputs, op.attr_values(stmt.attrs))
    return float(np.asarray(result, dtype=np.float64).reshape(-1)[0])
