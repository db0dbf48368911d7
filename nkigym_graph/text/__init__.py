"""The tiled-program text format of the seeds: ``parse_program`` / ``format_program``."""

from nkigym_graph.text.parser import parse_fragment, parse_program
from nkigym_graph.text.printer import format_program, format_statement

__all__ = ["format_program", "format_statement", "parse_fragment", "parse_program"]
