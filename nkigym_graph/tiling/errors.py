"""The error raised for a bad call of an op function (unknown op name, bad operand)."""

from __future__ import annotations

from nkigym_graph.errors import TilingError


class OpCallError(TilingError, ValueError):
    """An op function called with arguments it cannot accept, traced or on numpy arrays."""


class StatementLimitError(TilingError):
    """A tiled program that would have more statements than ``tile``'s ``max_statements``."""


class TracingError(TilingError):
    """The user's function raised while it was traced; the message names its line."""
