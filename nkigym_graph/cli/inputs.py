"""Reading what users type: shapes, ``FILE.py:FUNC`` references, output paths."""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nkigym_graph.errors import NkigymError
from nkigym_graph.foreign_errors import describe, where


class UsageError(NkigymError):
    """A command-line mistake: the message says what and how to fix it (exit code 2)."""


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def transform_names(flag: str, text: str | None) -> list[str] | None:
    """``a,b`` -> ``["a", "b"]``; None when not given; a list of no names is an error."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError(f"{flag}: no transform names in {text!r}; give comma-separated names")
    return names


def parse_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """``a=1024x1024`` -> ``("a", (1024, 1024))``."""
    name, sep, dims = text.partition("=")
    try:
        if not sep or not name.isidentifier():
            raise ValueError
        shape = tuple(int(d) for d in dims.lower().split("x"))
        if not shape or any(d <= 0 for d in shape):
            raise ValueError
    except ValueError:
        raise UsageError(f"--shape: bad shape {text!r}: expected NAME=DIMxDIM, e.g. a=1024x1024") from None
    return name, shape


def parse_shapes(items: Sequence[str] | None) -> dict[str, tuple[int, ...]]:
    """Several ``--shape`` values; a name given twice is an error."""
    shapes: dict[str, tuple[int, ...]] = {}
    for item in items or ():
        name, shape = parse_shape(item)
        if name in shapes:
            raise UsageError(f"--shape: shape of {name!r} given twice")
        shapes[name] = shape
    return shapes


def load_function(reference: str) -> Callable[..., Any]:
    """``path/to/file.py:func`` -> the function (the file is run as a module)."""
    path_text, sep, name = reference.rpartition(":")
    if not sep or not name:
        raise UsageError(f"expected FILE.py:FUNCTION, got {reference!r}")
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(f"nkigym_user_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load {path} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as err:
        raise UsageError(f"{path}:{err.lineno}: syntax error: {err.msg}") from None
    except (Exception, SystemExit) as err:  # the user's module may raise anything
        raise UsageError(f"running {path} failed: {describe(err)}{where(err)}") from None
    func = getattr(module, name, None)
    if not callable(func):
        found = [n for n, v in vars(module).items() if inspect.isfunction(v) and v.__module__ == spec.name]
        raise UsageError(f"{path} has no function {name!r}; functions there: {', '.join(found) or 'none'}")
    return func


def existing_file(text: str) -> Path:
    """A path that must exist."""
    path = Path(text)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    return path
