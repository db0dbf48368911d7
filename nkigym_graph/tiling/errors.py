"""The error raised for a bad call of an op function (unknown op name, bad operand)."""

from __future__ import annotations

from nkigym_graph.errors import TilingError


class OpCallError(TilingError, ValueError):
    """An op function called with arguments it cannot accept, traced or on numpy arrays."""
