"""The named elementwise and reduction functions ops accept (``op="tanh"``), with their
numpy semantics. Backends map these names to their own instructions.

>>> UNARY["relu"](np.array([-1.0, 2.0]))
array([0., 2.])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

import numpy as np

Unary = Callable[[np.ndarray], np.ndarray]
Binary = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    result: np.ndarray = 1.0 / (1.0 + np.exp(-x))
    return result


_SQRT_2_OVER_PI = float(np.sqrt(2.0 / np.pi))


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU in its tanh form, the one both backends compute (NKI's ``gelu_apprx_tanh``,
    Buda's ``gelu``): ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    result: np.ndarray = 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3)))
    return result


def _silu(x: np.ndarray) -> np.ndarray:
    return np.asarray(x * _sigmoid(x))


def _mean(x: np.ndarray, axis: int, keepdims: bool = False) -> np.ndarray:
    return np.asarray(np.mean(x, axis=axis, keepdims=keepdims))


UNARY: Mapping[str, Unary] = MappingProxyType(
    {
        "copy": lambda x: x.copy(),
        "exp": np.exp,
        "log": np.log,
        "tanh": np.tanh,
        "relu": lambda x: np.maximum(x, 0.0),
        "sigmoid": _sigmoid,
        "gelu": _gelu,
        "silu": _silu,
        "sqrt": np.sqrt,
        "rsqrt": lambda x: 1.0 / np.sqrt(x),
        "reciprocal": lambda x: 1.0 / x,
        "square": np.square,
        "abs": np.abs,
        "negative": np.negative,
    }
)

BINARY: Mapping[str, Binary] = MappingProxyType(
    {
        "add": np.add,
        "subtract": np.subtract,
        "multiply": np.multiply,
        "divide": np.divide,
        "maximum": np.maximum,
        "minimum": np.minimum,
    }
)

REDUCE: Mapping[str, Callable[..., np.ndarray]] = MappingProxyType(
    {
        "sum": np.sum,
        "max": np.max,
        "min": np.min,
        "mean": _mean,
    }
)
