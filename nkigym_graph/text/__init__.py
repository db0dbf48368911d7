"""The tiled-program text format of the seeds: ``parse_program`` / ``format_program``."""

from nkigym_graph.ir.printer import format_program, format_statement
from nkigym_graph.text.files import (
    ProgramFileError,
    dumps_program,
    loads_program,
    read_program,
    write_program,
)
from nkigym_graph.text.parser import parse_fragment, parse_program

__all__ = [
    "ProgramFileError",
    "dumps_program",
    "format_program",
    "format_statement",
    "loads_program",
    "parse_fragment",
    "parse_program",
    "read_program",
    "write_program",
]
