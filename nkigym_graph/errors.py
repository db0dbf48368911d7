"""The exceptions of nkigym-graph: each names what went wrong and where."""

from __future__ import annotations

MAX_MESSAGE_CHARS = 600
"""``str()`` of an error is at most this long (and ``MAX_MESSAGE_LINES`` lines); the
middle of a longer message (a huge statement or program text) is cut."""
MAX_MESSAGE_LINES = 6


class NkigymError(Exception):
    """Base class of every error this library raises on purpose.

    ``str(err)`` is at most a few lines (see ``shorten``); ``err.args[0]`` keeps the
    whole message.
    """

    def __str__(self) -> str:
        return shorten(super().__str__())


def shorten(message: str) -> str:
    """``message`` with its middle cut to fit ``MAX_MESSAGE_CHARS`` and ``MAX_MESSAGE_LINES``.

    >>> short = shorten("a" * 1000)
    >>> len(short), short[295:335]
    (480, 'aaaaa ... [550 characters cut] ... aaaaa')
    """
    lines = message.splitlines()
    if len(lines) > MAX_MESSAGE_LINES:
        keep = MAX_MESSAGE_LINES // 2
        cut = len(lines) - 2 * keep
        message = "\n".join([*lines[:keep], f"... [{cut} lines cut] ...", *lines[-keep:]])
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    head, tail = MAX_MESSAGE_CHARS // 2, MAX_MESSAGE_CHARS // 4
    cut = len(message) - head - tail
    return f"{message[:head]} ... [{cut} characters cut] ... {message[-tail:]}"


class NotFoundError(NkigymError, KeyError):
    """A lookup of something the program does not have (a statement id, a parameter).
    Also a ``KeyError``, shown as its message (``KeyError`` would quote it)."""

    def __str__(self) -> str:
        return shorten(str(self.args[0])) if self.args else ""


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


class OptionError(NkigymError):
    """A backend option (``emit_artifact(..., df=...)``) whose value the backend cannot take.

    ``option`` is the keyword (``df``) and ``problem`` what is wrong with its value (``must
    be one of ..., got 'x'``); the message is both. A caller that took the value from
    elsewhere names it there (the command line's ``emit --df``). A backend's error class
    mixes this in and sets both attributes.
    """

    option: str = ""
    problem: str = ""


class ResourceLimitError(NkigymError):
    """A request beyond a documented resource limit (memory, instructions, time); the
    message names the limit and how to raise it."""


class SearchError(NkigymError):
    """A search that cannot run or went wrong: a bad option, a transform that failed or
    produced a program that computes something else than the root (named with the state)."""

    result: object = None
    """When the best program's confirmation failed: the search's unconfirmed result (a
    ``SearchResult``); else None."""


class BatchFallbackWarning(UserWarning):
    """A batch of a transform's matches failed, so saturation applied one match instead
    (much slower on a large program). A built-in transform never does this; a plugin's
    match that understates its footprint (``reads``, ``mentions``) does."""
