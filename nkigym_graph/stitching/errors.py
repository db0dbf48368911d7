"""The error raised for weights that cannot be stitched or metadata that does not fit."""

from __future__ import annotations

from nkigym_graph.errors import NkigymError


class StitchError(NkigymError):
    """Weights, a tile, a core grid or a stitched array that breaks a stitching rule."""
