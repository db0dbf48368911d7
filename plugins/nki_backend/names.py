"""Names in the emitted kernel: NKI dtypes, NKI math operators, and Python identifiers.

The math tables map the program's function names (``nkigym_graph.ir.functions``) to
``nki.language`` operators: unary ones are ``nisa.activation`` functions, binary ones
``nisa.tensor_tensor`` / ``nisa.tensor_scalar`` operators, reductions
``nisa.tensor_reduce`` operators.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from types import MappingProxyType

from nkigym_graph.ir.dtypes import DTYPES

from .errors import NkiEmitError

NKI_ITEMSIZE: Mapping[str, int] = MappingProxyType(
    {
        "float32": 4,
        "tfloat32": 4,
        "bfloat16": 2,
        "float16": 2,
        "float8_e4m3": 1,
        "float8_e5m2": 1,
        "int32": 4,
        "uint32": 4,
        "int16": 2,
        "uint16": 2,
        "int8": 1,
        "uint8": 1,
        "bool_": 1,
    }
)
"""The NKI data types (``nl.<name>``) and their sizes in bytes."""

UNARY_OPS: Mapping[str, str] = MappingProxyType(
    {
        name: f"nl.{name}"
        for name in (
            "copy",
            "exp",
            "log",
            "tanh",
            "relu",
            "sigmoid",
            "gelu",
            "silu",
            "sqrt",
            "rsqrt",
            "reciprocal",
            "square",
            "abs",
            "negative",
        )
    }
    | {"gelu": "nl.gelu_apprx_tanh"}  # the IR's gelu is the tanh form
)
BINARY_OPS: Mapping[str, str] = MappingProxyType(
    {name: f"nl.{name}" for name in ("add", "subtract", "multiply", "divide", "maximum", "minimum")}
)
REDUCE_OPS: Mapping[str, str] = MappingProxyType(
    {"sum": "nl.add", "max": "nl.maximum", "min": "nl.minimum", "mean": "nl.add"}
)
MEAN_REDUCTIONS = frozenset({"mean"})
"""Reductions whose sum is then divided by the number of elements reduced."""

RESERVED = frozenset({"nki", "nl", "nisa", "range", "len", "print", *keyword.kwlist})
"""Names the kernel text uses itself; program names equal to one get a trailing ``_``."""


def nki_dtype(name: str, what: str) -> str:
    """``name`` if NKI has that dtype, else an error naming ``what`` carries it."""
    if name not in NKI_ITEMSIZE:
        supported = ", ".join(d for d in DTYPES if d in NKI_ITEMSIZE)  # the ones tile takes
        raise NkiEmitError(
            f"{what} has dtype {name}, which NKI does not support "
            f"(supported: {supported}); tile the function with one of "
            "these or pass emit(..., dtype='float32') (on the command line, emit --dtype fp32)"
        )
    return name


def math_op(table: Mapping[str, str], name: str, statement: str) -> str:
    """The ``nl`` operator for function ``name``, or an error naming the statement."""
    try:
        return table[name]
    except KeyError:
        raise NkiEmitError(
            f"no NKI operator for {name!r} (known: {', '.join(sorted(table))})", statement
        ) from None


def identifier(name: str) -> str:
    """``name`` as a Python identifier that does not clash with the kernel's own names."""
    text = re.sub(r"\W", "_", name) or "kernel"
    if text[0].isdigit():
        text = f"_{text}"
    return f"{text}_" if text in RESERVED else text


class NameTable:
    """Hands out unique identifiers (``tensor_2``, ``tensor_2_sb``, ``tensor_2_sb_1``)."""

    def __init__(self) -> None:
        self._used: set[str] = set(RESERVED)

    def reserve(self, name: str) -> str:
        """Claim ``name`` exactly (parameters); an error if it is taken."""
        if name in self._used:
            raise NkiEmitError(f"name {name!r} is used twice in the kernel")
        self._used.add(name)
        return name

    def fresh(self, stem: str) -> str:
        """``stem`` or ``stem_1``, ``stem_2``, ... whichever is free first."""
        candidate, counter = stem, 0
        while candidate in self._used:
            counter += 1
            candidate = f"{stem}_{counter}"
        self._used.add(candidate)
        return candidate

    def loop_prefix(self) -> str:
        """A prefix ``p`` such that no name in use is ``p0``, ``p1``, ... (loop variables)."""
        for prefix in ("i", "it", "loop_i"):
            if not any(re.fullmatch(rf"{prefix}\d+", name) for name in self._used):
                return prefix
        raise NkiEmitError("no free prefix for loop variables")
