"""Program files (``.nkg``): the seed text format plus one header comment that keeps what
the text alone cannot say (target, parameter shapes and dtypes), so files chain between
commands losslessly::

    # nkigym-graph program: target=trn2 params=a:1024x1024:float32,b:1024x1024:float32
    def tiled_matmul(a, b):
        ...

A file without the header parses with inferred shapes and the default target.
"""

from __future__ import annotations

import re
from pathlib import Path

from nkigym_graph.dtypes import DtypeError, resolve_dtype
from nkigym_graph.errors import ParseError
from nkigym_graph.program import Program
from nkigym_graph.text.parser import parse_fragment, parse_program

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


def write_program(program: Program, path: str | Path) -> Path:
    """Write ``program`` to ``path``."""
    path = Path(path)
    path.write_text(dumps_program(program))
    return path


def loads_program(text: str) -> Program:
    """Parse file text (with or without the header)."""
    first, _, rest = text.partition("\n")
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
    if fields.get("fragment") == "1":
        return parse_fragment(rest, shapes, dtype=dtypes, target=target)
    return parse_program(rest, shapes, dtype=dtypes, target=target)


def read_program(path: str | Path) -> Program:
    """Read a program file."""
    return loads_program(Path(path).read_text())
