"""Element types a program's parameters and outputs may have, and their common aliases.

``resolve_dtype`` is the one place a user's dtype becomes a canonical name (``tile``,
the text parser's ``dtype=``, program-file headers and the CLI's ``--dtype``): a
canonical name, an alias (``bf16``, ``fp32``, ``half``, ``np.float32``), a numpy dtype
or scalar type, or ``ml_dtypes.bfloat16``.

>>> resolve_dtype("bf16"), resolve_dtype(np.float16), resolve_dtype("np.float32")
('bfloat16', 'float16', 'float32')
>>> resolve_dtype("nope")
Traceback (most recent call last):
  ...
nkigym_graph.ir.dtypes.DtypeError: dtype: 'nope' is not a supported dtype; choose one of float32, \
bfloat16, float16, float64, float8_e4m3, float8_e5m2 (aliases: fp32, bf16, fp16, fp64, ...)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import Any

import ml_dtypes
import numpy as np

from nkigym_graph.errors import NkigymError

DTYPES: tuple[str, ...] = ("float32", "bfloat16", "float16", "float64", "float8_e4m3", "float8_e5m2")
"""Canonical dtype names (numpy's, or ml_dtypes' for bfloat16 and fp8), first the default."""

ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "fp32": "float32",
        "f32": "float32",
        "single": "float32",
        "bf16": "bfloat16",
        "fp16": "float16",
        "f16": "float16",
        "half": "float16",
        "fp64": "float64",
        "f64": "float64",
        "double": "float64",
        "fp8_e4m3": "float8_e4m3",
        "fp8_e5m2": "float8_e5m2",
    }
)
"""Other spellings users type, by canonical name."""

_PREFIXES = ("numpy.", "np.", "nl.", "ml_dtypes.")
_STORAGE = {
    "bfloat16": ml_dtypes.bfloat16,
    "float8_e4m3": ml_dtypes.float8_e4m3,
    "float8_e5m2": ml_dtypes.float8_e5m2,
}


Dtypes = Any
"""A dtype for every parameter, or a mapping of parameter name to dtype."""


class DtypeError(NkigymError, ValueError):
    """A dtype that is not one of ``DTYPES`` (or an alias of one)."""


def choices() -> str:
    """``float32, bfloat16, ...`` for help texts and messages."""
    return ", ".join(DTYPES)


def resolve_dtype(value: object, argument: str = "dtype") -> str:
    """The canonical name of ``value``; ``DtypeError`` naming ``argument`` otherwise."""
    name = _name_of(value)
    if name is not None:
        name = ALIASES.get(name, name)
        if name in DTYPES:
            return name
    raise DtypeError(
        f"{argument}: {_shown(value)} is not a supported dtype; choose one of {choices()} "
        "(aliases: fp32, bf16, fp16, fp64, ...)"
    )


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype that stores ``name`` (a canonical name)."""
    found: np.dtype[Any] = np.dtype(_STORAGE.get(name, name))
    return found


@lru_cache(maxsize=256)
def itemsize(dtype: str | None) -> int:
    """Bytes per element of ``dtype`` (a canonical name, another numpy or ml_dtypes name;
    None or an unknown name counts as float32, the default)."""
    name = dtype or DTYPES[0]
    try:
        return int(numpy_dtype(name).itemsize)
    except TypeError:
        found = getattr(ml_dtypes, name, None)
        return int(np.dtype(found).itemsize) if found is not None else itemsize(DTYPES[0])


def _name_of(value: object) -> str | None:
    if isinstance(value, str):
        text = value.strip().lower()
        for prefix in _PREFIXES:
            text = text.removeprefix(prefix)
        if text in ALIASES or text in DTYPES:
            return text
        value = text  # numpy's own spellings: "f4", "<f2", "float" (float64, as in numpy)
    if value is None or isinstance(value, bool | int | float) or value == "":
        return None
    try:
        with warnings.catch_warnings():  # numpy deprecates some spellings; they are refused anyway
            warnings.simplefilter("ignore")
            name: str = np.dtype(value).name  # type: ignore[call-overload]
            return name
    except (TypeError, ValueError):
        return None


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def dtype_chooser(
    dtypes: Dtypes, argument: str = "dtype", names: Sequence[str] | None = None
) -> Callable[[str], str]:
    """``name -> dtype`` for one dtype or a mapping by parameter name (float32 for the
    names it lacks); every dtype is resolved (and refused by ``argument``) at once, and
    a mapping naming one that is not among ``names`` (the parameters) is refused.

    >>> dtype_chooser({"z": "bf16"}, names=("x", "y"))
    Traceback (most recent call last):
      ...
    nkigym_graph.ir.dtypes.DtypeError: dtype: 'z' is not a parameter (parameters: x, y)
    """
    if not isinstance(dtypes, Mapping):
        one = resolve_dtype(dtypes, argument)
        return lambda name: one
    if names is not None:
        _check_names(dtypes, names, argument)
    table = {name: resolve_dtype(d, f"{argument}[{name!r}]") for name, d in dtypes.items()}
    return lambda name: table.get(name, DTYPES[0])


def _check_names(dtypes: Mapping[Any, Any], names: Sequence[str], argument: str) -> None:
    """``DtypeError`` naming the keys of ``dtypes`` that are not among ``names``."""
    unknown = [key for key in dtypes if key not in names]
    if unknown:
        listed = ", ".join(map(_shown, unknown))
        which = "is not a parameter" if len(unknown) == 1 else "are not parameters"
        raise DtypeError(f"{argument}: {listed} {which} (parameters: {', '.join(names) or 'none'})")
