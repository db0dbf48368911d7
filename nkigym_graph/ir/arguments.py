"""Checks of public functions' arguments: a wrong type or value raises the caller's
``NkigymError`` subclass naming the argument, what it must be and what it got.

>>> from nkigym_graph.errors import NkigymError
>>> require_int(True, "budget", NkigymError, minimum=1)
Traceback (most recent call last):
...
nkigym_graph.errors.NkigymError: budget must be an integer >= 1, got bool True
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

ErrorType = Callable[[str], Exception]


def describe(value: Any, limit: int = 60) -> str:
    """``value``'s type and a short repr, for messages."""
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(value).__name__} {text}"


def require_int(value: Any, name: str, error: ErrorType, *, minimum: int = 0) -> int:
    """``value`` as an int of at least ``minimum`` (a bool is not an integer here)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise error(f"{name} must be an integer >= {minimum}, got {describe(value)}")
    number = operator.index(value)
    if number < minimum:
        raise error(f"{name} must be an integer >= {minimum}, got {number}")
    return number


def require_seconds(value: Any, name: str, error: ErrorType) -> float:
    """``value`` as a finite number of seconds above 0 (a bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error(f"{name} must be a number of seconds > 0, got {describe(value)}")
    try:
        seconds = float(value)
    except OverflowError:  # an int beyond any float (10**400)
        raise error(
            f"{name} must be a number of seconds > 0, got an int of {int(value).bit_length()} bits"
        ) from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise error(f"{name} must be a number of seconds > 0, got {value!r}")
    return seconds


def require_type(value: Any, kind: type | tuple[type, ...], name: str, error: ErrorType, what: str) -> Any:
    """``value`` if it is an instance of ``kind`` (``what`` says what is expected)."""
    if not isinstance(value, kind):
        raise error(f"{name} must be {what}, got {describe(value)}")
    return value


def require_program(value: Any, name: str, error: ErrorType) -> Program:
    """``value`` if it is a ``Program``."""
    from nkigym_graph.ir.program import Program

    program: Program = require_type(value, Program, name, error, "a Program (from tile or parse_program)")
    return program
