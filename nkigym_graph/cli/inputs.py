"""Reading what users type: numbers, dtypes, shapes, ``FILE.py:FUNC`` references, the
files to read and the files to write."""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from nkigym_graph.errors import NkigymError
from nkigym_graph.foreign_errors import describe, where
from nkigym_graph.ir.dtypes import ALIASES, DTYPES, DtypeError, resolve_dtype
from nkigym_graph.nki_sim.dtypes import NKI_DTYPES


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
    return _int_at_least(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """An argparse type: an integer >= 0 (a seed)."""
    return _int_at_least(text, 0, "a non-negative integer")


def _int_at_least(text: str, minimum: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
    return value


def kernel_dtype(text: str) -> str:
    """An argparse type: an NKI dtype name (``bfloat16``, ``nl.bfloat16``), or one of the
    aliases ``tile --dtype`` takes (``bf16``, ``fp32``, ...)."""
    name = text.removeprefix("nl.")
    name = ALIASES.get(name, name)
    if name not in NKI_DTYPES:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an NKI dtype; choose one of {', '.join(NKI_DTYPES)} "
            "(aliases: fp32, bf16, fp16, ...)"
        )
    return name


def emit_dtype(text: str) -> str:
    """An argparse type: the dtype of an emitted kernel, one of ``tile``'s dtypes that NKI
    has (``bfloat16``, ``nl.bfloat16``, or an alias: ``bf16``, ``fp32``, ...)."""
    choices = [name for name in DTYPES if name in NKI_DTYPES]
    try:
        name = resolve_dtype(text)
    except DtypeError:
        name = None
    if name not in choices:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a dtype an NKI kernel can be emitted in; choose one of {', '.join(choices)} "
            "(aliases: fp32, bf16, fp16, ...)"
        )
    return name


def output_file(text: str) -> str:
    """An argparse type: a file to write, refused up front (before any work) when it is a
    directory or its directory does not exist."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory; give a file name")
    folder = path.parent
    if not folder.is_dir():
        problem = "is not a directory" if folder.exists() else "does not exist"
        raise argparse.ArgumentTypeError(f"cannot write {text}: {folder} {problem}")
    return text


def write_text(path: str, text: str) -> None:
    """Write ``text`` to the file ``path``, or a ``UsageError`` naming it and the problem."""
    try:
        Path(path).write_text(text)
    except OSError as err:
        raise UsageError(f"cannot write {path}: {err.strerror or describe(err)}") from None


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
    path = existing_file(path_text)
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
    """A file that must exist (a directory is refused as one)."""
    path = Path(text)
    if path.is_dir():
        raise UsageError(f"{path} is a directory, not a file")
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    return path


def netlist_file(text: str) -> Path:
    """A file that must exist and hold a YAML map, as a netlist does; anything else at its
    top (a list, a single value, nothing) is refused saying what it holds. Text that is not
    YAML at all is left to the netlist checker, which names the line."""
    path = existing_file(text)
    found = _yaml_top(path)
    if found is not None:
        raise UsageError(
            f"{path} is not a netlist: it holds {found}, not a YAML map of sections (queues, graphs, ...)"
        )
    return path


def _yaml_top(path: Path) -> str | None:
    """What the top of the YAML in ``path`` is when it is not a map; None for a map or for
    a file YAML cannot read. Only the first events are parsed."""
    try:
        with path.open() as stream:
            top = next(
                (e for e in yaml.parse(stream, Loader=yaml.SafeLoader) if isinstance(e, yaml.NodeEvent)), None
            )
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if top is None:
        return "nothing (the file is empty or only comments)"
    if isinstance(top, yaml.SequenceStartEvent):
        return "a list"
    if isinstance(top, yaml.ScalarEvent):
        value = top.value if len(top.value) <= 40 else top.value[:37] + "..."
        return f"a single value, {value!r}"
    return None  # a map, or an alias the checker reports
