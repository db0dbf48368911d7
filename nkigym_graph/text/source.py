"""The checks before and around parsing program text: the text is a ``str`` of valid
Unicode, ``shapes`` maps names to sizes, and text nested past what ``ast`` (or the
parser) can hold is a ``ParseError``, never a ``RecursionError``.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from nkigym_graph.errors import ParseError
from nkigym_graph.ir.arguments import describe, require_int

F = TypeVar("F", bound=Callable[..., Any])


def require_text(text: Any) -> str:
    """``text`` if it is a ``str``; ParseError naming it otherwise."""
    if not isinstance(text, str):
        hint = " (decode bytes first: data.decode())" if isinstance(text, bytes | bytearray) else ""
        raise ParseError(f"text must be a str of program text, got {describe(text)}{hint}")
    return text


def read_module(text: Any) -> ast.Module:
    """``text`` (a ``str``) read by ``ast``, never evaluated."""
    require_text(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        line = text.count("\n", 0, err.start) + 1
        column = err.start - (text.rfind("\n", 0, err.start) + 1) + 1
        raise ParseError(
            f"the text is not valid Unicode ({err.reason}: {text[err.start]!r})", line, column
        ) from None
    try:
        return ast.parse(textwrap.dedent(text))  # leading blank lines kept: lines count from the text's first
    except SyntaxError as err:
        raise ParseError(err.msg, err.lineno or 0, err.offset or 0) from None
    except ValueError as err:
        raise ParseError(str(err)) from None


def nesting_guarded(func: F) -> F:
    """``func`` with text nested too deeply for ``ast`` (``1+1+...``) made a ``ParseError``."""

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (RecursionError, MemoryError):
            raise ParseError("the text nests expressions too deeply to parse") from None

    return guarded  # type: ignore[return-value]


def checked_shapes(shapes: Any) -> dict[str, Sequence[int]]:
    """``shapes`` (None or a map of parameter name to sizes) as a plain dict."""
    if shapes is None:
        return {}
    if not isinstance(shapes, Mapping):
        raise ParseError(
            f"shapes must be a map of name to sizes, e.g. {{'a': (128, 128)}}, got {describe(shapes)}"
        )
    checked: dict[str, Sequence[int]] = {}
    for name, sizes in shapes.items():
        if not isinstance(name, str):
            raise ParseError(f"shapes keys must be parameter names, got {describe(name)}")
        if isinstance(sizes, str | bytes) or not isinstance(sizes, Sequence):
            raise ParseError(f"shapes[{name!r}] must be a sequence of sizes, got {describe(sizes)}")
        checked[name] = tuple(require_int(n, f"shapes[{name!r}]", ParseError, minimum=1) for n in sizes)
    return checked
