"""The exceptions of nkigym-graph: each names what went wrong and where."""

from __future__ import annotations


class NkigymError(Exception):
    """Base class of every error this library raises on purpose."""


class ParseError(NkigymError):
    """Program text that is not in the tiled-program format.

    ``line`` and ``column`` are 1-based positions in the text.
    """

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        self.line = line
        self.column = column
        where = f"line {line}, column {column}: " if line else ""
        super().__init__(f"{where}{message}")


class VerificationError(NkigymError):
    """A program that breaks a well-formedness rule.

    ``rule`` is a stable short id (e.g. ``"bounds"``), ``statement`` the offending
    statement's text line (empty for program-wide rules).
    """

    def __init__(self, rule: str, message: str, statement: str = "") -> None:
        self.rule = rule
        self.statement = statement
        where = f"statement `{statement}`: " if statement else ""
        super().__init__(f"[{rule}] {where}{message}")


class TilingError(NkigymError):
    """A user function or shape set that cannot be tiled (e.g. mismatched axis sizes)."""


class TransformError(NkigymError):
    """A transform that cannot be applied, or one that produced an invalid program."""


class PluginError(NkigymError):
    """A plugin, backend, transform, target or cost model that is unknown or malformed."""


class ResourceLimitError(NkigymError):
    """A request beyond a documented resource limit (memory, instructions, time); the
    message names the limit and how to raise it."""
