"""NKI data types as numpy dtypes.

bfloat16 and the fp8 formats are stored through ``ml_dtypes``; engines compute in
float32 and cast on write, as the hardware does. ``tfloat32`` is stored as float32 (so
``nl.tfloat32 == nl.float32`` here). Fresh allocations are filled with NaN, or, for
integer types that have no NaN, with the most negative (unsigned: largest) value.

>>> to_dtype("bfloat16").name
'bfloat16'
>>> to_dtype(np.float64) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import ml_dtypes
import numpy as np

NKI_DTYPES: Mapping[str, np.dtype[Any]] = MappingProxyType(
    {
        "bool_": np.dtype(np.bool_),
        "int8": np.dtype(np.int8),
        "int16": np.dtype(np.int16),
        "int32": np.dtype(np.int32),
        "uint8": np.dtype(np.uint8),
        "uint16": np.dtype(np.uint16),
        "uint32": np.dtype(np.uint32),
        "float16": np.dtype(np.float16),
        "float32": np.dtype(np.float32),
        "tfloat32": np.dtype(np.float32),
        "bfloat16": np.dtype(ml_dtypes.bfloat16),
        "float8_e4m3": np.dtype(ml_dtypes.float8_e4m3),
        "float8_e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn),
        "float8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
    }
)
"""``nl`` attribute name -> storage dtype."""

FLOAT_DTYPES: frozenset[np.dtype[Any]] = frozenset(
    NKI_DTYPES[n] for n in ("float16", "float32", "bfloat16", "float8_e4m3", "float8_e4m3fn", "float8_e5m2")
)
INT_DTYPES: frozenset[np.dtype[Any]] = frozenset(
    NKI_DTYPES[n] for n in ("bool_", "int8", "int16", "int32", "uint8", "uint16", "uint32")
)
MATMUL_INPUT_DTYPES: frozenset[np.dtype[Any]] = FLOAT_DTYPES
"""fp8 / bf16 / fp16 / tf32 / fp32, as the nc_matmul documentation lists."""

_SUPPORTED = FLOAT_DTYPES | INT_DTYPES


def to_dtype(value: Any) -> np.dtype[Any] | None:
    """The storage dtype for an NKI dtype given as ``nl.float32``, a name or a numpy type."""
    if isinstance(value, str):
        return NKI_DTYPES.get(value.removeprefix("nl."))
    try:
        dtype = np.dtype(value)
    except TypeError:
        return None
    return dtype if dtype in _SUPPORTED else None


def is_float(dtype: np.dtype[Any]) -> bool:
    return dtype in FLOAT_DTYPES


def is_int(dtype: np.dtype[Any]) -> bool:
    return dtype in INT_DTYPES


def fill_value(dtype: np.dtype[Any]) -> Any:
    """What a fresh, uninitialised allocation reads as."""
    if dtype in FLOAT_DTYPES:
        return np.nan
    if dtype == np.bool_:
        return True
    info = np.iinfo(dtype)
    return info.max if info.min == 0 else info.min


def dtype_name(dtype: np.dtype[Any]) -> str:
    """The NKI name of a storage dtype (``float32`` for tfloat32)."""
    return "bool_" if dtype == np.bool_ else dtype.name
