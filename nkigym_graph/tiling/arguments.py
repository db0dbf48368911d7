"""Checking ``tile``'s arguments: the target, the parameter shapes and the statement limit.

Each mistake raises a named error that says which argument is wrong and what was expected.

>>> parameter_shapes({"a": (128, "x")}, ["a"], "f")
Traceback (most recent call last):
  ...
nkigym_graph.errors.TilingError: shapes: parameter 'a': shape (128, 'x') is not a tuple of integers
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

from nkigym_graph.errors import PluginError, TilingError
from nkigym_graph.ir.targets import Target
from nkigym_graph.plugin.registry import get_target

MAX_STATEMENTS = 1_000_000
"""``tile``'s default limit on the statements of the tiled program."""


def check_target(target: object) -> Target:
    """A ``Target`` or a target name, resolved."""
    if not isinstance(target, Target | str):
        raise PluginError(
            f"target must be a Target or a target name such as 'trn2', got {type(target).__name__} {target!r}"
        )
    return get_target(target)


def check_limit(max_statements: object) -> int:
    """``max_statements`` must be a positive integer."""
    if isinstance(max_statements, bool) or not isinstance(max_statements, int) or max_statements < 1:
        raise TilingError(f"max_statements must be a positive integer, got {max_statements!r}")
    return max_statements


def parameter_shapes(shapes: Any, names: list[str], name: str) -> dict[str, tuple[int, ...]]:
    """Shapes by parameter name, from a mapping or a sequence in parameter order."""
    if isinstance(shapes, Mapping):
        unknown = [k for k in shapes if k not in names]
        if unknown:
            raise TilingError(
                f"{name}: shapes given for unknown parameter(s) {', '.join(map(repr, unknown))}; "
                f"the parameters are {', '.join(names)}"
            )
        missing = [p for p in names if p not in shapes]
        if missing:
            raise TilingError(f"{name}: missing shape for parameter(s) {', '.join(map(repr, missing))}")
        given = {p: shapes[p] for p in names}
    elif isinstance(shapes, Sequence) and not isinstance(shapes, str | bytes):
        if len(shapes) != len(names):
            raise TilingError(
                f"{name}: {len(shapes)} shapes given for {len(names)} parameters ({', '.join(names)})"
            )
        given = dict(zip(names, shapes, strict=True))
    else:
        raise TilingError(
            f"shapes must map parameter names to shapes, e.g. {{'{names[0]}': (128, 128)}}, "
            f"got {type(shapes).__name__} {_short(shapes)}"
        )
    return {p: _shape(p, shape) for p, shape in given.items()}


def _shape(param: str, shape: object) -> tuple[int, ...]:
    problem = f"shapes: parameter {param!r}: shape {_short(shape)}"
    try:
        if isinstance(shape, str | bytes):
            raise TypeError
        dims = tuple(_dim(n) for n in shape)  # type: ignore[attr-defined]
    except TypeError:
        raise TilingError(f"{problem} is not a tuple of integers") from None
    if len(dims) != 2:
        raise TilingError(f"{problem} has rank {len(dims)}; only 2-D tensors can be tiled")
    if any(n <= 0 for n in dims):
        raise TilingError(f"{problem} must have positive sizes")
    return dims


def _dim(n: object) -> int:
    if isinstance(n, bool):
        raise TypeError
    return operator.index(n)  # type: ignore[arg-type]


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
