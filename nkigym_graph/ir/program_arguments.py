"""Checks of ``Program(...)``'s arguments: a wrong type is a ``VerificationError`` (rule
``argument``) naming the argument, before any verification runs."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from nkigym_graph.errors import VerificationError
from nkigym_graph.ir.arguments import describe, require_int, require_type
from nkigym_graph.ir.dtypes import resolve_dtype
from nkigym_graph.ir.ops.base import Op
from nkigym_graph.ir.statement import Statement
from nkigym_graph.ir.variables import Param

_INT = (int, np.integer)
_error = functools.partial(VerificationError, "argument")


def _items(value: Any, name: str, what: str) -> tuple[Any, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise _error(f"{name} must be {what}, got {describe(value)}")
    return tuple(value)


def params_of(value: Any, name: str) -> tuple[Param, ...]:
    """``value`` as Params (each a Param or a ``(name, shape, dtype, space)`` tuple)."""
    what = "an iterable of Param (name, shape, dtype, space)"
    params = []
    for item in _items(value, name, what):
        if not isinstance(item, tuple) or not 2 <= len(item) <= 4:
            raise _error(f"{name} must be {what}, got an item {describe(item)}")
        param = Param(*item)
        require_type(param.name, str, f"{name}: a name", _error, "a str")
        for size in _items(param.shape, f"{name}: the shape of {param.name!r}", "a tuple of sizes"):
            require_int(size, f"{name}: the shape of {param.name!r}", _error, minimum=1)
        dtype = resolve_dtype(param.dtype, f"{name}: the dtype of {param.name!r}")
        require_type(param.space, str, f"{name}: the space of {param.name!r}", _error, "'hbm' or 'sbuf'")
        params.append(Param(param.name, tuple(param.shape), dtype, param.space))
    return tuple(params)


def statements_of(value: Any, known: Callable[[int, Statement], bool] | None = None) -> tuple[Statement, ...]:
    """``value`` as Statements, each with an ``Op`` and a tuple of operands; ``known(index,
    statement)`` says which are known to be (they come from a verified program) and
    need no check."""
    statements = _items(value, "statements", "an iterable of Statement")
    for index, stmt in enumerate(statements):
        if known is not None and known(index, stmt):
            continue
        check_statement(stmt, f"statements[{index}]")
    return statements


def check_statement(stmt: Any, name: str) -> None:
    """A ``VerificationError`` (rule ``argument``) naming ``name`` unless ``stmt`` is a
    well-typed ``Statement``."""
    if not _well_typed(stmt):
        raise _error(
            f"{name} must be a Statement(op: Op, operands: tuple of Operand(var: str, "
            f"slices: tuple of (int, int)), attrs: tuple of (str, value), accumulate: bool), "
            f"got {describe(stmt, 200)}"
        )


def _well_typed(stmt: Any) -> bool:
    if not (isinstance(stmt, Statement) and isinstance(stmt.op, Op) and type(stmt.accumulate) is bool):
        return False
    if not isinstance(stmt.operands, tuple) or not isinstance(stmt.attrs, tuple):
        return False
    for operand in stmt.operands:
        if not (isinstance(operand, tuple) and len(operand) == 2 and isinstance(operand[0], str)):
            return False
        slices = operand[1]
        if not isinstance(slices, tuple):
            return False
        for pair in slices:
            if not (
                isinstance(pair, tuple)
                and len(pair) == 2
                and isinstance(pair[0], _INT)
                and isinstance(pair[1], _INT)
            ):
                return False
    return all(
        isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) and _hashable(a[1]) for a in stmt.attrs
    )


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def returns_of(value: Any) -> tuple[str, ...]:
    """``value`` (a name or names) as a tuple of names."""
    names = (value,) if isinstance(value, str) else _items(value, "returns", "a name or names")
    for item in names:
        require_type(item, str, "returns", _error, "a name or names (str)")
    return names


def check_header(name: Any, fragment: Any, explicit_slices: Any) -> None:
    """The program's name is a str; the flags are True or False."""
    require_type(name, str, "name", _error, "a str")
    require_type(fragment, bool, "fragment", _error, "True or False")
    require_type(explicit_slices, bool, "explicit_slices", _error, "True or False")
