"""Errors of the search."""

from __future__ import annotations

from nkigym_graph.errors import NkigymError


class SearchError(NkigymError):
    """A search that cannot run or went wrong: a bad option, a transform that failed or
    produced a program that computes something else than the root (named with the state)."""
