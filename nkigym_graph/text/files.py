"""Program files (``.nkg``): the seed text format plus one header comment that keeps what
the text alone cannot say (target, parameter shapes and dtypes), so files chain between
commands losslessly::

    # nkigym-graph program: target=trn2 params=a:1024x1024:float32,b:1024x1024:float32
    def tiled_matmul(a, b):
        ...

A fragment's header (``fragment=1``) lists its outputs after its inputs in ``params``, the
same way, so an output's dtype (a bf16 or fp8 result) survives the round trip::

    # nkigym-graph program: target=trn2 params=a:128x128:bfloat16,out:128x128:bfloat16 fragment=1

The header is read strictly: an unknown or repeated field, or words that are no field,
are a ``ParseError`` on line 1, and so is a ``params`` field that leaves out one of the
program's parameters or names one it does not have (it lists every parameter, as
``name:shape:dtype``; leaving the field out lists none). A fragment's output the header
leaves out (a file written before outputs were listed) has an inferred shape and float32.
A file without the header parses with inferred shapes, float32 parameters and the default
target.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from pathlib import Path

from nkigym_graph.errors import NkigymError, ParseError
from nkigym_graph.ir.dtypes import DtypeError, resolve_dtype
from nkigym_graph.ir.program import Program
from nkigym_graph.text.parser import ParamsCheck, parse_declared, parse_program
from nkigym_graph.text.source import require_text

HEADER = "# nkigym-graph program:"
HEADER_FIELDS = ("target", "params", "fragment")
_FIELD = re.compile(r"(\w+)=(\S*)")


def program_header(program: Program) -> str:
    """The header line for ``program``: every parameter, and a fragment's outputs after
    them (they carry the outputs' shapes and dtypes, which the text does not)."""
    listed = (*program.params, *program.outputs) if program.fragment else program.params
    params = ",".join(f"{p.name}:{'x'.join(map(str, p.shape))}:{p.dtype}" for p in listed)
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
    """Parse file text (with or without the header; a header lists every parameter, see
    the module docstring)."""
    first, _, rest = require_text(text).partition("\n")
    if not first.startswith(HEADER):
        return parse_program(text)
    fields = _header_fields(first[len(HEADER) :])
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, str] = {}
    for item in filter(None, fields.get("params", "").split(",")):
        try:
            name, shape, dtype = item.split(":")
            shapes[name] = tuple(int(n) for n in shape.split("x"))
        except ValueError:
            raise ParseError(f"malformed parameter {item!r} in the header", 1, 1) from None
        if name in dtypes:
            raise ParseError(f"parameter {name!r} is listed twice in the header", 1, 1)
        try:
            dtypes[name] = resolve_dtype(dtype, f"header, parameter {name!r}")
        except DtypeError as err:
            raise ParseError(str(err), 1, 1) from None
    target = fields.get("target", "trn2")
    rest = "\n" + rest  # the header is the file's line 1: errors name the file's lines
    fragment = fields.get("fragment") == "1"
    check = _declared_params(dtypes)
    return parse_declared(rest, shapes, dtype=dtypes, target=target, fragment=fragment, check_params=check)


def _declared_params(declared: Collection[str]) -> ParamsCheck:
    """The check that the header's ``params`` are the program's parameters: each of them,
    and no other name (a fragment's outputs aside); a ``ParseError`` on line 1."""

    def check(params: Sequence[str], outputs: Sequence[str]) -> None:
        unknown = [name for name in declared if name not in params and name not in outputs]
        if unknown:
            which = "is not a parameter" if len(unknown) == 1 else "are not parameters"
            raise ParseError(
                f"header field params: {_names(unknown)} {which} (parameters: {', '.join(params) or 'none'})",
                1,
                1,
            )
        missing = [name for name in params if name not in declared]
        if missing:
            noun = "parameter" if len(missing) == 1 else "parameters"
            raise ParseError(
                f"header field params leaves out {noun} {_names(missing)} "
                "(it lists every parameter as name:shape:dtype)",
                1,
                1,
            )

    return check


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(name) for name in names)


def _header_fields(text: str) -> dict[str, str]:
    """The header's ``name=value`` fields; an unknown or repeated field, or words that are
    no field, are a ``ParseError`` on line 1 (a typo would otherwise be ignored)."""
    found = _FIELD.findall(text)
    stray = _FIELD.sub("", text).split()
    if stray:
        raise ParseError(f"the header has {stray[0]!r}, which is not a name=value field", 1, 1)
    fields: dict[str, str] = {}
    for name, value in found:
        if name not in HEADER_FIELDS:
            raise ParseError(
                f"unknown header field {name!r} (the fields are {', '.join(HEADER_FIELDS)})", 1, 1
            )
        if name in fields:
            raise ParseError(f"header field {name!r} given twice", 1, 1)
        fields[name] = value
    if fields.get("fragment", "1") != "1":
        raise ParseError(
            f"header field fragment={fields['fragment']!r}: write fragment=1 or leave it out", 1, 1
        )
    return fields


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
