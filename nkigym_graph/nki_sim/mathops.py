"""NKI math operators (``nl.exp``, ``nl.add``, ``nl.maximum``, ...).

One object per operator serves both uses NKI has for it: as the ``op=`` argument of an
ISA instruction (activation function, element-wise or reduction operator) and as an
old-style value-returning call on tiles (``nl.exp(tile)``, ``nl.add(a, b)``,
``nl.max(tile, axis=1)``), which allocates its result in SBUF. Arithmetic runs in
float32, as the engines do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]
Unary = Callable[[Array], Array]
Binary = Callable[[Array, Array], Array]

_SQRT_2_OVER_PI = np.float32(np.sqrt(2.0 / np.pi))


def erf(x: Array) -> Array:
    """Error function (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return (sign * (1.0 - poly * np.exp(-a * a))).astype(x.dtype)


def _sigmoid(x: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x: Array) -> Array:
    return np.logaddexp(np.float32(0.0), x)


def _as_flag(fn: Callable[[Array, Array], Array]) -> Binary:
    def flag(a: Array, b: Array) -> Array:
        out: Array = fn(a, b).astype(np.result_type(a, b))
        return out

    return flag


@dataclass(frozen=True, eq=False)
class MathOp:
    """One NKI operator. ``unary`` makes it an activation function, ``binary`` an
    element-wise operator, ``reducer`` a reduction; ``bitvec`` ops need integer data."""

    name: str
    unary: Unary | None = None
    binary: Binary | None = None
    reducer: np.ufunc | None = None
    bitvec: bool = False
    reduces_when_called: bool = False
    """``nl.max(x, axis)`` / ``nl.min(x, axis)`` reduce when called; as ``op=`` they are
    the element-wise maximum / minimum."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from nkigym_graph.nki_sim.values import call_math_op

        return call_math_op(self, *args, **kwargs)

    def __repr__(self) -> str:
        return f"nl.{self.name}"


def _ops() -> list[MathOp]:
    unary: dict[str, Unary] = {
        "copy": lambda x: x,
        "bypass": lambda x: x,
        "exp": np.exp,
        "log": np.log,
        "sqrt": np.sqrt,
        "rsqrt": lambda x: 1.0 / np.sqrt(x),
        "reciprocal": lambda x: 1.0 / x,
        "square": np.square,
        "abs": np.abs,
        "negative": np.negative,
        "sign": np.sign,
        "sin": np.sin,
        "cos": np.cos,
        "tan": np.tan,
        "arctan": np.arctan,
        "tanh": np.tanh,
        "sigmoid": _sigmoid,
        "relu": lambda x: np.maximum(x, np.float32(0.0)),
        "silu": lambda x: x * _sigmoid(x),
        "gelu": lambda x: 0.5 * x * (1.0 + erf(x / np.float32(np.sqrt(2.0)))),
        "gelu_apprx_tanh": lambda x: (
            0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + np.float32(0.044715) * x * x * x)))
        ),
        "gelu_apprx_sigmoid": lambda x: x * _sigmoid(np.float32(1.702) * x),
        "softplus": _softplus,
        "mish": lambda x: x * np.tanh(_softplus(x)),
        "erf": erf,
        "floor": np.floor,
        "ceil": np.ceil,
    }
    ops = [MathOp(name, unary=fn) for name, fn in unary.items()]
    arithmetic: dict[str, tuple[Binary, np.ufunc | None]] = {
        "add": (np.add, np.add),
        "subtract": (np.subtract, np.subtract),
        "multiply": (np.multiply, np.multiply),
        "divide": (np.divide, None),
        "maximum": (np.maximum, np.maximum),
        "minimum": (np.minimum, np.minimum),
        "power": (np.power, None),
        "equal": (_as_flag(np.equal), None),
        "not_equal": (_as_flag(np.not_equal), None),
        "greater": (_as_flag(np.greater), None),
        "greater_equal": (_as_flag(np.greater_equal), None),
        "less": (_as_flag(np.less), None),
        "less_equal": (_as_flag(np.less_equal), None),
        "logical_and": (_as_flag(np.logical_and), None),
        "logical_or": (_as_flag(np.logical_or), None),
        "logical_xor": (_as_flag(np.logical_xor), None),
    }
    ops += [MathOp(name, binary=fn, reducer=red) for name, (fn, red) in arithmetic.items()]
    ops += [
        MathOp("max", binary=np.maximum, reducer=np.maximum, reduces_when_called=True),
        MathOp("min", binary=np.minimum, reducer=np.minimum, reduces_when_called=True),
    ]
    bitvec: dict[str, tuple[Binary, np.ufunc | None]] = {
        "bitwise_and": (np.bitwise_and, np.bitwise_and),
        "bitwise_or": (np.bitwise_or, np.bitwise_or),
        "bitwise_xor": (np.bitwise_xor, np.bitwise_xor),
        "left_shift": (np.left_shift, None),
        "right_shift": (np.right_shift, None),
    }
    ops += [MathOp(name, binary=fn, reducer=red, bitvec=True) for name, (fn, red) in bitvec.items()]
    ops.append(MathOp("invert", unary=np.invert, bitvec=True))
    return ops


MATH_OPS: Mapping[str, MathOp] = MappingProxyType({op.name: op for op in _ops()})
"""``nl`` attribute name -> operator."""
