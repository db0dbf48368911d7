"""Numpy semantics of Buda ops and TMs on tensors of shape ``(t, rows, cols)``.

Follows the backend's golden model: elementwise ops act per element; ``gelu`` is the tanh
approximation; ``reciprocal(0)`` uses the float32 epsilon; ``relu_en`` clamps with a
threshold (mode ``min``: keep ``x > threshold``, else 0; mode ``max``: clamp to
``[0, threshold]``). Reduces leave their result in row 0 (``dim: r``) or column 0
(``dim: c``) of one tile and zeros elsewhere, exactly like the golden tile reduce.
Every function raises ``ValueError`` with a plain reason; callers add the op's name.
Those that make a larger tensor than they read (``matmul``, a ``broadcast`` TM) take
``max_tiles`` and refuse, before making it, a result of more tiles than that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from nkigym_graph.buda.tms import Tm

TILE = 32
Array = np.ndarray
MALFORMED = (ValueError, LookupError, TypeError, ArithmeticError)
"""What these functions raise for a netlist they cannot run (too few operands, an
attribute of the wrong kind, ...); the evaluator reports it naming the op."""
_SQRT_2_OVER_PI = float(np.sqrt(2.0 / np.pi))
_EPS32 = float(np.finfo(np.float32).eps)


def _gelu(x: Array) -> Array:
    return 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def _gelu_derivative(x: Array) -> Array:
    first = 0.5 * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3)))
    return first + x * np.exp(-0.5 * x * x) * (0.5 * _SQRT_2_OVER_PI)


def _reciprocal(x: Array) -> Array:
    return 1.0 / np.where(x == 0.0, _EPS32, x)


UNARY_FUNCTIONS: dict[str, Callable[[Array], Array]] = {
    "datacopy": lambda x: x.copy(),
    "nop": lambda x: x.copy(),
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "reciprocal": _reciprocal,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tanh": np.tanh,
    "square": np.square,
    "abs": np.abs,
    "sine": np.sin,
    "cosine": np.cos,
    "gelu": _gelu,
    "gelu_derivative": _gelu_derivative,
    "relu": lambda x: np.maximum(x, 0.0),
}
"""One-input elementwise ops (``relu`` is accepted here though Buda spells it ``relu_en``)."""

BINARY_FUNCTIONS: dict[str, Callable[[Array, Array], Array]] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "maximum": np.maximum,
}


def unary(op_type: str, x: Array, attributes: Mapping[Any, Any]) -> Array:
    """A one-input elementwise op (``lrelu`` reads ``slope``, ``power`` reads ``exp``)."""
    if op_type == "lrelu":
        slope = float(attributes.get("slope", 0.01))
        return np.where(x >= 0.0, x, slope * x)
    if op_type == "power":
        return np.power(x, int(attributes.get("exp", 1)))
    if op_type not in UNARY_FUNCTIONS:
        raise ValueError(f"op type '{op_type}' is not evaluated")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # tile padding: inf and nan, silently
        return UNARY_FUNCTIONS[op_type](x)


def elementwise(op_type: str, operands: list[Array], attributes: Mapping[Any, Any]) -> Array:
    """A one- or two-input elementwise op of any known type."""
    known = op_type in UNARY_FUNCTIONS or op_type in ("lrelu", "power") or op_type in BINARY_FUNCTIONS
    if not known:
        raise ValueError(f"op type '{op_type}' is not evaluated")
    expected = 2 if op_type in BINARY_FUNCTIONS else 1
    require_inputs(op_type, operands, expected)
    return binary(op_type, *operands) if expected == 2 else unary(op_type, operands[0], attributes)


def require_inputs(op_type: str, operands: list[Array], expected: int) -> None:
    """A ``ValueError`` saying so unless there are ``expected`` operands."""
    if len(operands) != expected:
        raise ValueError(f"{op_type} takes {expected} input(s), got {len(operands)}")


def binary(op_type: str, a: Array, b: Array) -> Array:
    """A two-input elementwise op; both inputs must have the same shape."""
    if a.shape != b.shape:
        raise ValueError(f"{op_type} inputs have shapes {a.shape} and {b.shape}")
    return BINARY_FUNCTIONS[op_type](a, b)


def relu(x: Array, attributes: Mapping[Any, Any]) -> Array:
    """The ``relu_en`` output stage with ``relu_threshold`` and ``relu_mode``."""
    threshold = float(attributes.get("relu_threshold", 0.0))
    if str(attributes.get("relu_mode", "min")) == "max":
        return np.where(x > threshold, threshold, np.maximum(x, 0.0))
    return np.where(x > threshold, np.maximum(x, 0.0), 0.0)


def check_tiles(shape: tuple[int, ...], max_tiles: int | None, what: str) -> None:
    """``ValueError`` if a ``(t, rows, cols)`` tensor of ``shape`` would hold more than
    ``max_tiles`` tiles (None: no bound); ``what`` names the tensor."""
    if max_tiles is None:
        return
    t, rows, cols = shape
    tiles = t * -(-rows // TILE) * -(-cols // TILE)
    if tiles > max_tiles:
        raise ValueError(
            f"{what} would hold {tiles} tiles, more than NetlistLimits.tensor_tiles = {max_tiles}"
        )


def matmul(
    a: Array,
    b: Array,
    m_k: int | None,
    u_kt: int | None,
    spill: Callable[[Array], Array] | None = None,
    max_tiles: int | None = None,
) -> Array:
    """``a @ b`` per ``t``; the inner dim must be ``m_k * u_kt`` tiles when both are given.

    With ``spill``, the inner dim is contracted in ``m_k`` steps of ``u_kt`` tiles and the
    partial sum between steps is ``spill(partial)``: the backend keeps it in the op's
    intermediate buffer, in its ``intermed_df``, and reloads it for the next step. A
    product of more than ``max_tiles`` tiles is refused before it is computed."""
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError(f"matmul inputs have shapes {a.shape} and {b.shape}")
    check_tiles((a.shape[0], a.shape[1], b.shape[2]), max_tiles, f"the product of {a.shape} and {b.shape}")
    if m_k is not None and u_kt is not None and a.shape[2] != m_k * u_kt * TILE:
        raise ValueError(
            f"inner dim is {a.shape[2] // TILE} tiles but m_k * u_kt = {m_k} * {u_kt} = {m_k * u_kt}"
        )
    if spill is None or m_k is None or u_kt is None or m_k <= 1:
        return np.matmul(a, b)
    step = u_kt * TILE
    out = np.matmul(a[:, :, :step], b[:, :step, :])
    for k in range(1, m_k):
        part = slice(k * step, (k + 1) * step)
        out = spill(out) + np.matmul(a[:, :, part], b[:, part, :])
    return out


def reduce(x: Array, dim: str, kind: str, z: int = 1) -> Array:
    """Reduce over ``r``/``c`` (result in row/column 0 of one tile) or over groups of ``z``
    along ``t``; ``kind`` is ``max`` or ``sum``."""
    if kind not in ("max", "sum"):
        raise ValueError(f"reduce type '{kind}' is not evaluated (max or sum)")
    function = np.max if kind == "max" else np.sum
    t, rows, cols = x.shape
    if dim == "z":
        if z < 1 or t % z:
            raise ValueError(f"reduce over z = {z} does not divide t = {t}")
        return function(x.reshape(t // z, z, rows, cols), axis=1)
    if dim not in ("r", "c"):
        raise ValueError(f"reduce dim '{dim}' is not evaluated (r, c or z)")
    axis = 1 if dim == "r" else 2
    out = np.zeros((t, TILE, cols) if dim == "r" else (t, rows, TILE))
    if dim == "r":
        out[:, 0, :] = function(x, axis=axis)
    else:
        out[:, :, 0] = function(x, axis=axis)
    return out


def tile_broadcast(x: Array, dim: str) -> Array:
    """Inside each tile copy row 0 (``r``) or column 0 (``c``) over the tile."""
    t, rows, cols = x.shape
    tiles = x.reshape(t, rows // TILE, TILE, cols // TILE, TILE)
    if dim == "r":
        picked = np.broadcast_to(tiles[:, :, :1, :, :], tiles.shape)
    elif dim == "c":
        picked = np.broadcast_to(tiles[:, :, :, :, :1], tiles.shape)
    else:
        raise ValueError(f"tile_broadcast dim must be r or c, got '{dim}'")
    return picked.reshape(t, rows, cols).copy()


def _slice_factor(size: int, n: int, what: str) -> int:
    if n < 1 or size % n or (what != "t" and (size // n) % TILE):
        raise ValueError(f"cannot split {what} of size {size} into {n} tile-aligned parts")
    return size // n


def apply_tm(x: Array, tm: Tm, max_tiles: int | None = None) -> Array:
    """One TM on a ``(t, rows, cols)`` tensor (a broadcast to more than ``max_tiles`` tiles
    is refused before it is made)."""
    t, rows, cols = x.shape
    n = int(tm.factor or 1)
    if tm.name == "broadcast":
        reps = {"z": (n, 1, 1), "r": (1, n, 1), "c": (1, 1, n)}.get(str(tm.dim))
        if reps is None:
            raise ValueError(f"broadcast dim must be r, c or z, got '{tm.dim}'")
        spread = tuple(size * rep for size, rep in zip(x.shape, reps, strict=True))
        check_tiles(spread, max_tiles, f"{x.shape} after {tm}")
        return np.tile(x, reps)
    if tm.name == "tile_broadcast":
        return tile_broadcast(x, str(tm.dim))
    if tm.name == "transpose":
        return np.ascontiguousarray(np.swapaxes(x, 1, 2))
    if tm.name == "hslice":
        width = _slice_factor(cols, n, "cols")
        return x.reshape(t, rows, n, width).transpose(0, 2, 1, 3).reshape(t * n, rows, width)
    if tm.name == "hstack":
        _slice_factor(t, n, "t")
        return x.reshape(t // n, n, rows, cols).transpose(0, 2, 1, 3).reshape(t // n, rows, n * cols)
    if tm.name == "vslice":
        height = _slice_factor(rows, n, "rows")
        return x.reshape(t * n, height, cols)
    if tm.name == "vstack":
        _slice_factor(t, n, "t")
        return x.reshape(t // n, n * rows, cols)
    raise ValueError(f"TM '{tm}' is not evaluated")


def apply_tms(x: Array, tms: tuple[Tm, ...], max_tiles: int | None = None) -> Array:
    """The TMs in order (see :func:`apply_tm`)."""
    for tm in tms:
        x = apply_tm(x, tm, max_tiles)
    return x
