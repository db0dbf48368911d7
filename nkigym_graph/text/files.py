"""Program files (``.nkg``): the seed text format plus one header comment that keeps what
the text alone cannot say (target, parameter shapes and dtypes), so files chain between
commands losslessly::

    # nkigym-graph program: target=trn2 params=a:1024x1024:float32,b:1024x1024:float32
    def tiled_matmul(a, b):
        ...

A file without the header parses with inferred shapes and the default target.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from nkigym_graph.errors import NkigymError, ParseError
from nkigym_graph.ir.dtypes import DtypeError, resolve_dtype
from nkigym_graph.ir.program import Program
from nkigym_graph.text.parser import parse_fragment, parse_program
from nkigym_graph.text.source import require_text

HEADER = "# nkigym-graph program:"
_FIELD = re.compile(r"(\w+)=(\S*)")


def program_header(program: Program) -> str:
    """The header line for ``program``."""
    params = ",".join(f"{p.name}:{'x'.join(map(str, p.shape))}:{p.dtype}" for p in program.params)
    kind = " fragment=1" if program.fragment else ""
    return f"{HEADER} target={program.target.name} params={params}{kind}"


def dumps_program(program: Program) -> str:
    """File text: header and program."""
    return f"{program_header(program)}\n{program.to_source()}"


class ProgramFileError(NkigymError, OSError):
    """A program file that cannot be read or written (missing, a directory, not text)."""


def write_program(program: Program, path: str | os.PathLike[str]) -> Path:
    """Write ``program`` to ``path``."""
    if not isinstance(program, Program):
        raise ProgramFileError(f"write_program: program must be a Program, got {type(program).__name__}")
    target = _path(path)
    try:
        target.write_text(dumps_program(program))
    except OSError as err:
        raise ProgramFileError(f"cannot write program file {target}: {err.strerror or err}") from None
    return target


def loads_program(text: str) -> Program:
    """Parse file text (with or without the header)."""
    first, _, rest = require_text(text).partition("\n")
    if not first.startswith(HEADER):
        return parse_program(text)
    fields = dict(_FIELD.findall(first[len(HEADER) :]))
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, str] = {}
    for item in filter(None, fields.get("params", "").split(",")):
        try:
            name, shape, dtype = item.split(":")
            shapes[name] = tuple(int(n) for n in shape.split("x"))
        except ValueError:
            raise ParseError(f"malformed parameter {item!r} in the header", 1, 1) from None
        try:
            dtypes[name] = resolve_dtype(dtype, f"header, parameter {name!r}")
        except DtypeError as err:
            raise ParseError(str(err), 1, 1) from None
    target = fields.get("target", "trn2")
    rest = "\n" + rest  # the header is the file's line 1: errors name the file's lines
    if fields.get("fragment") == "1":
        return parse_fragment(rest, shapes, dtype=dtypes, target=target)
    return parse_program(rest, shapes, dtype=dtypes, target=target)


def read_program(path: str | os.PathLike[str]) -> Program:
    """Read a program file."""
    source = _path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ProgramFileError(f"{source} is not a program file (not UTF-8 text)") from None
    except OSError as err:
        raise ProgramFileError(f"cannot read program file {source}: {err.strerror or err}") from None
    return loads_program(text)


def _path(path: object) -> Path:
    if not isinstance(path, str | os.PathLike) or isinstance(path, bytes):
        raise ProgramFileError(f"path must be a str or a path, got {type(path).__name__}")
    return Path(path)
