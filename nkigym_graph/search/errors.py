"""Errors of the search (``SearchError`` is defined with the other errors, since the
numeric evaluation that search uses raises it too)."""

from __future__ import annotations

from nkigym_graph.errors import SearchError

__all__ = ["SearchError"]
