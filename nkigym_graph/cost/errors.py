"""Errors of cost models."""

from __future__ import annotations

from nkigym_graph.errors import NkigymError


class CostModelError(NkigymError):
    """A program a cost model cannot price (e.g. an op its tables do not know)."""
