"""Errors of the Buda netlist tools: each names the netlist, the place and the problem."""

from __future__ import annotations

from nkigym_graph.errors import NkigymError


class NetlistError(NkigymError):
    """A netlist that cannot be read: bad YAML, or a section of the wrong shape.

    ``line`` and ``column`` are 1-based positions in the YAML text (0 when unknown);
    ``source`` names the file or ``<string>``.
    """

    def __init__(self, message: str, line: int = 0, column: int = 0, source: str = "") -> None:
        self.line = line
        self.column = column
        self.source = source
        where = source or "netlist"
        if line:
            where += f", line {line}" + (f", column {column}" if column else "")
        super().__init__(f"{where}: {message}")


class NetlistEvaluationError(NkigymError):
    """A netlist the numpy evaluator cannot run (missing input, shape mismatch, unsupported op).

    ``where`` names the graph op (and fused sub-op) that failed.
    """

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        super().__init__(f"{where}: {message}")
