"""Tile padding the netlist would sum, refused where an op makes it non-finite.

Queues pad every tensor to whole 32 x 32 tiles with zeros, and the netlist sums rows
and contracts ``K`` as matmuls that multiply the padding by zeros (a column of ones
shorter than the tile, the other operand's zero padding), and takes a row maximum or
minimum after multiplying the padding by zeros and adding the lowest value there. That
is exact while the padding is finite. An op that turns the zeros into ``-inf``, ``inf``
or nan (``log``, ``reciprocal``, ``rsqrt``, a ``sqrt`` of a shifted value) makes those
products nan, which would spread into the real outputs. So does a finite value too large
for the data format the netlist stores it in (``exp(x + 100)`` on the zeros is exp(100),
inf in Float32; ``exp(x + 12)`` is inf in Float16). ``check_padding`` follows the
padding value of every variable through the program (each op's own semantics applied to
it, the result rounded to the netlist's data formats; an operand spread over a row or
column that ends inside a tile contributes the value the netlist masks its padding to,
:data:`REAL`) and refuses a contraction over a padded axis of a variable whose padding
is not finite.

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

import functools
import math
from collections.abc import Sequence

import numpy as np

from nkigym_graph.buda.quantize import quantize
from nkigym_graph.ir.ops.base import Op
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Statement

from .shapes import TILE

SPREAD = "broadcast"
"""The axis label of an operand dimension an op spreads (``Op.axes``): not summed."""
REAL = 1.0
"""What an operand spread over a row or column contributes to the padding: the netlist
masks the tile padding past a spread to this value (:func:`.lowering._whole`), so the
padding is the same whatever the data."""
SUM_USE = ("sums", "add the tile padding")
PADDING_USES = {
    ("tensor_reduce", "max"): ("takes the maximum of", "mask the tile padding (multiplying it by 0)"),
    ("tensor_reduce", "min"): ("takes the minimum of", "mask the tile padding (multiplying it by 0)"),
}
"""How a contraction other than a sum reads the tile padding: ``(verb, what the netlist
would do)`` by ``(op, its op attribute)`` (a maximum masks the padding to the lowest value
by a multiply by 0 and an add, :mod:`.lowering`)."""


def check_padding(program: Program, formats: Sequence[str] = ()) -> None:
    """``ValueError`` naming the first statement that contracts a padded axis of a
    variable whose padding an op made non-finite (see the module docstring). ``formats``
    are the Buda float data formats the netlist keeps values in (its intermediates and
    dest); every padding value is rounded to each, so one beyond a format's range is inf.
    A program that contracts no padded axis is not followed at all."""
    contracted_by = {op: _contracted(op) for op in {stmt.op for stmt in program.statements}}
    if not any(
        _padded_sums(stmt, contracted_by[stmt.op]) for stmt in program.statements if contracted_by[stmt.op]
    ):
        return
    pad: dict[str, float] = {}
    results: dict[tuple[object, ...], float] = {}  # most statements repeat an op on equal paddings
    for node, stmt in program.items():
        contracted = contracted_by[stmt.op]
        values = [pad.get(stmt.operands[p].var, 0.0) for p in stmt.op.read_positions]
        for index, dim, extent in _padded_sums(stmt, contracted):
            if not math.isfinite(values[index]):
                operand = stmt.operands[stmt.op.read_positions[index]]
                verb, use = PADDING_USES.get((stmt.op.name, stmt.attr("op")), SUM_USE)
                raise ValueError(
                    f"statement `{program.describe(node)}`: it {verb} {extent} "
                    f"{'column(s)' if dim else 'row(s)'} of {operand.var!r} "
                    f"(shape {tuple(program.variables[operand.var].shape)}), and the netlist would "
                    f"{use}, where an op made {values[index]}{_held_in(formats)} "
                    "(which times 0 is nan); "
                    f"pad the tensor to a multiple of {TILE} {'columns' if dim else 'rows'}"
                )
        result = _padding_of(stmt, values, bool(contracted), results, formats)
        dst = stmt.dst.var
        pad[dst] = _stored(pad.get(dst, 0.0) + result, formats) if stmt.accumulate else result


def _padded_sums(stmt: Statement, contracted: dict[int, list[int]]) -> list[tuple[int, int, int]]:
    """``(read index, dimension, extent)`` of each contracted dimension of ``stmt`` that
    ends inside a tile."""
    found = []
    for index, dims in contracted.items():
        slices = stmt.operands[stmt.op.read_positions[index]].slices
        for dim in dims:
            extent = slices[dim][1] - slices[dim][0]
            if extent % TILE:
                found.append((index, dim, extent))
    return found


def _contracted(op: Op) -> dict[int, list[int]]:
    """Per read operand (in ``read_positions`` order), the dimensions whose axis label the
    result does not have, spread ones aside: the ones the op sums over."""
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


def _held_in(formats: Sequence[str]) -> str:
    """Where the padding value is held, for the refusal's message."""
    return f" as held in {' / '.join(dict.fromkeys(formats))}" if formats else ""


def _stored(value: float, formats: Sequence[str]) -> float:
    """``value`` rounded to each data format of ``formats`` in turn (beyond a format's
    range it is inf)."""
    return _rounded(value.hex(), tuple(formats))


@functools.lru_cache(maxsize=4096)
def _rounded(bits: str, formats: tuple[str, ...]) -> float:
    """:func:`_stored` of ``float.fromhex(bits)`` (by its bits: 0.0 and -0.0 differ), kept:
    every ``+=`` statement rounds its sum, mostly of the same few values."""
    array = np.full((1, 16), float.fromhex(bits))  # one block of 16 values, whole for any format
    for df in formats:
        array = quantize(array, df)
    return float(array[0, 0])


def _padding_of(
    stmt: Statement,
    values: Sequence[float],
    contracts: bool,
    results: dict[tuple[object, ...], float],
    formats: Sequence[str] = (),
) -> float:
    """The padding of ``stmt``'s result given its operands' paddings ``values`` (``results``
    memoizes the op's semantics by op, attributes, paddings and spread operands, for one
    program, whose statements hold their attributes alive)."""
    if contracts:  # sums of padding products: finite (zero) while every operand's is
        return 0.0 if all(math.isfinite(v) for v in values) else math.nan
    op, dst = stmt.op, stmt.dst
    spread = tuple(
        any(
            hi - lo == 1 < d_hi - d_lo
            for (lo, hi), (d_lo, d_hi) in zip(stmt.operands[position].slices, dst.slices, strict=False)
        )
        for position in op.read_positions
    )
    # the attributes by identity and the paddings by their bits: 2 == 2.0 and 0.0 == -0.0
    key = (op.name, id(stmt.attrs), tuple(v.hex() for v in values), spread)
    found = results.get(key)
    if found is None:
        found = results[key] = _stored(_computed(stmt, values, spread), formats)
    return found


def _computed(stmt: Statement, values: Sequence[float], spread: Sequence[bool]) -> float:
    op = stmt.op
    if not op.read_positions:
        return 0.0
    inputs = [np.full((1, 1), REAL if s else v) for v, s in zip(values, spread, strict=True)]
    with np.errstate(all="ignore"):
        result = op.compute(inputs, op.attr_values(stmt.attrs))
    return float(np.asarray(result, dtype=np.float64).reshape(-1)[0])
