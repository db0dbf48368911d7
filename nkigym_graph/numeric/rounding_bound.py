"""How far a kernel's rounding can move each element of a program's result: a first-order
bound, element by element, carried through the program alongside its exact (float64) values.

A kernel computes a program's statements on an engine (in float32) and stores each
result in a tile of its dtype. Each statement adds its own rounding to the error its
operands already carry, and passes that error on as far as it is sensitive to it:

* the engine's rounding, ``engine`` of the magnitude it computes at: for a contraction (a
  matmul, a sum) the sum of its terms' magnitudes, so that a result that cancels keeps its
  terms' rounding (``|a|.T @ |b|``); for an elementwise result its own, bounded as storing
  is (below);
* storing the result in ``storage``: at most half a unit in its last place (relative
  ``eps / 2``, and of the smallest normal number in the subnormal range), and never more
  than the error already carried plus the exact result's own rounding (storing an exactly
  held value, an input or a zero, adds nothing). A partial sum is stored after each
  addition (in a tile of the dtype it is; in float32 PSUM only the last one is, when it
  is moved to a tile for its reader);
* the operands' errors, scaled by the statement's sensitivity to them, measured by finite
  differences in float64 (a contraction also on its terms' magnitudes).

A DMA copy (a load, a store) moves values held already: it neither computes nor rounds.
Where an exact value is not finite, or a perturbation leaves float64's range, the element
has no bound (0): such an element must agree exactly.

>>> import numpy as np
>>> from nkigym_graph import parse_program
>>> p = parse_program('''
... def f(a, b):
...     output = nkigym.ndarray((128, 128), dtype=np.float32)
...     tensor_0 = a[0:128, 0:128]
...     tensor_1 = b[0:128, 0:128]
...     tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
...     output[0:128, 0:128] = tensor_2
...     return output
... ''')
>>> a, b = np.eye(128), np.ones((128, 128))
>>> a[1, 0], b[0] = 1.0, -1.0  # output[0] = b[0] + b[1] = 0: the engine rounds at |b[0]| + |b[1]|
>>> exact, bound = rounding_bound(p, {"a": a, "b": b}, np.dtype(np.float32), 2.0**-20)
>>> float(exact["output"][0, 0]), round(float(bound["output"][0, 0] * 2**20), 3)
(0.0, 2.0)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from nkigym_graph.errors import ResourceLimitError
from nkigym_graph.ir.ops.base import BROADCAST, Op
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Statement
from nkigym_graph.numeric.blas import one_blas_thread
from nkigym_graph.numeric.compare import magnitude
from nkigym_graph.numeric.memory_limit import DEFAULT_MAX_BYTES, dropped_after, interpreter_bytes

FLOAT32 = np.dtype(np.float32)
"""What an engine computes in."""
DMA = "dma"
"""The engine of ops that copy values (loads and stores): they neither compute nor round."""

STEP = 2.0**-20
"""The largest perturbation of an operand by which a statement's sensitivity to it is
measured, relative to the operand's largest magnitude."""

Arrays = dict[str, np.ndarray]


def rounding_bound(
    program: Program,
    arrays: Mapping[str, Any],
    storage: np.dtype[Any] | None,
    engine: float,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> tuple[Arrays, Arrays]:
    """The exact (float64) value of the parameters, the outputs and the variables the
    program returns on ``arrays`` (held exactly, as the kernel reads them; every other
    tile is dropped after its last use) and, per element, a first-order bound of how far
    a kernel that computes each statement with relative rounding ``engine`` and stores its
    results in ``storage`` (None: not rounded) can be from it."""
    keep = program.returns
    need = 2 * interpreter_bytes(program, np.dtype(np.float64), True, keep)
    if max_bytes is not None and need > max_bytes:
        raise ResourceLimitError(
            f"rounding bound: running {program.name!r} holds {need} bytes of arrays > the limit of "
            f"{max_bytes} bytes"
        )
    values = {p.name: np.asarray(arrays[p.name], dtype=np.float64) for p in program.params}
    bounds = {name: np.zeros_like(value) for name, value in values.items()}
    dropped = dropped_after(program, keep)
    with one_blas_thread(), np.errstate(all="ignore"):
        for at, stmt in enumerate(program.statements):
            var = stmt.dst.var
            if var not in values:
                values[var] = np.zeros(program.variables[var].shape)
                bounds[var] = np.zeros(program.variables[var].shape)
            if stmt.op.name != "alloc":
                _bound_statement(stmt, values, bounds, storage, engine)
            for done in dropped.get(at, ()):
                values.pop(done, None)
                bounds.pop(done, None)
    return values, bounds


def _bound_statement(
    stmt: Statement, values: Arrays, bounds: Arrays, storage: np.dtype[Any] | None, engine: float
) -> None:
    """Run ``stmt`` on ``values``, and its error bound on ``bounds`` (see ``rounding_bound``)."""
    var, slices = stmt.dst
    reads = [stmt.operands[position] for position in stmt.op.read_positions]
    operands = [values[v][_index(s)] for v, s in reads]
    carried = [bounds[v][_index(s)] for v, s in reads]
    result, bound = statement_bound(stmt.op, stmt.attr_map, operands, carried, engine)
    region = _index(slices)
    if stmt.accumulate:  # the addition is the engine's too
        result = values[var][region] + result
        bound = bounds[var][region] + bound + engine * np.abs(result)
    values[var][region] = result
    copies = stmt.op.engine == DMA and not stmt.accumulate  # the values are held already
    bounds[var][region] = stored(result, bound, None if copies else storage)


def statement_bound(
    op: Op,
    attrs: Mapping[str, Any],
    operands: Sequence[np.ndarray],
    carried: Sequence[np.ndarray],
    engine: float,
) -> tuple[np.ndarray, np.ndarray]:
    """A statement's exact result and the bound of its error before it is stored: its
    operands' errors as far as the result is sensitive to them, plus the engine's rounding."""
    result = np.asarray(op.compute(operands, attrs), dtype=np.float64)
    if contracts(op):
        return result, contraction_bound(op, attrs, operands, carried, engine, result)
    bound = np.zeros_like(result)
    for position, error in enumerate(carried):
        if error.any():  # both ways: a function may bend there (relu at 0)
            bound += sensitivity(op, attrs, operands, position, error, result, (1.0, -1.0))
    if op.engine == DMA:  # a copy computes nothing
        return result, bound
    return result, bound + rounding(result, bound, FLOAT32, engine)


def contraction_bound(
    op: Op,
    attrs: Mapping[str, Any],
    operands: Sequence[np.ndarray],
    carried: Sequence[np.ndarray],
    engine: float,
    result: np.ndarray,
) -> np.ndarray:
    """The bound of a contraction's error: the engine rounds every partial sum, so of the
    sum of its terms' magnitudes; an operand's error is passed on as the terms' magnitudes
    pass it (they may cancel in the result) or as the result does (a maximum picks one term)."""
    sizes = [np.abs(operand) for operand in operands]
    of_sizes = np.asarray(op.compute(sizes, attrs), dtype=np.float64)
    bound = engine * np.abs(of_sizes)
    for position, error in enumerate(carried):
        if error.any():
            on_values = sensitivity(op, attrs, operands, position, error, result, (1.0,))
            on_sizes = sensitivity(op, attrs, sizes, position, error, of_sizes, (1.0,))
            bound += np.fmax(on_values, on_sizes)
    return bound


def sensitivity(
    op: Op,
    attrs: Mapping[str, Any],
    operands: Sequence[np.ndarray],
    position: int,
    error: np.ndarray,
    result: np.ndarray,
    signs: tuple[float, ...],
) -> np.ndarray:
    """How much ``result`` changes, per element, when operand ``position`` moves by
    ``error`` times each of ``signs`` (the largest change, to first order): a finite
    difference whose step is ``STEP`` of the operand's largest magnitude."""
    scale = STEP * _largest(np.abs(operands[position]) + error) / _largest(error)
    if not np.isfinite(scale) or scale == 0:
        return np.zeros_like(result)
    change = np.zeros_like(result)
    for sign in signs:
        moved = list(operands)
        moved[position] = operands[position] + sign * scale * error
        change = np.fmax(change, np.abs(np.asarray(op.compute(moved, attrs), dtype=np.float64) - result))
    return _finite(change / scale)


def stored(result: np.ndarray, carried: np.ndarray, storage: np.dtype[Any] | None) -> np.ndarray:
    """The bound ``carried`` of ``result``'s error once it is stored in ``storage`` (None:
    not rounded), 0 where it is not finite."""
    if storage is not None:
        carried = carried + rounding(result, carried, storage, float_limits(storage)[0])
    return _finite(carried)


def rounding(result: np.ndarray, carried: np.ndarray, dtype: np.dtype[Any], unit: float) -> np.ndarray:
    """The most rounding a value within ``carried`` of ``result`` to ``dtype`` adds to its
    error: ``unit`` of its magnitude (of ``dtype``'s smallest normal number in the subnormal
    range), and no more than ``carried`` plus the exact result's own rounding (a value
    ``dtype`` holds exactly, an input or a zero, gains nothing)."""
    ulp = unit * np.maximum(np.abs(result) + carried, float_limits(dtype)[1])
    snapped = carried + np.abs(result.astype(dtype).astype(np.float64) - result)
    return np.asarray(np.fmin(ulp, snapped))


@functools.cache
def float_limits(dtype: np.dtype[Any]) -> tuple[float, float, float]:
    """A float ``dtype``'s unit roundoff (the largest relative error of rounding to nearest in
    it, half its epsilon), its smallest normal and its largest finite number."""
    info: Any = ml_dtypes.finfo(dtype)  # type: ignore[no-untyped-call]
    return float(info.eps) / 2, float(info.tiny), float(info.max)


def contracts(op: Op) -> bool:
    """Whether ``op`` sums or reduces over an axis of an operand that its result lacks (a
    matmul's K, a reduction's free axis); an op that declares no axes is taken to."""
    positions = (*op.read_positions, *op.write_positions)
    if not op.write_positions or len(op.axes) <= max(positions):
        return True
    written = {label for position in op.write_positions for label in op.axes[position]}
    read = {label for position in op.read_positions for label in op.axes[position]}
    return bool(read - written - {BROADCAST})


def _index(slices: Sequence[tuple[int, int]]) -> tuple[slice, ...]:
    return tuple(slice(start, stop) for start, stop in slices)


def _largest(values: np.ndarray) -> float:
    """The largest finite element of non-negative ``values`` (0.0 if none)."""
    largest = float(np.max(values, initial=0.0))
    return largest if np.isfinite(largest) else magnitude(values)


def _finite(bound: np.ndarray) -> np.ndarray:
    """``bound`` with 0 where it is not finite (no bound there)."""
    return np.where(np.isfinite(bound), bound, 0.0)
