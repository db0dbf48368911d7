"""Colours, edge styles and DOT quoting shared by every picture.

Ops get a fixed colour (each built-in op its own, grouped by engine; an op from a plugin
one from a separate palette by a hash of its name), so the same op has the same colour
in every picture and every run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from hashlib import blake2b

FIXED = {
    # DMA and memory
    "load": "#80b1d3",
    "store": "#fdb462",
    "alloc": "#d9d9d9",
    # Tensor engine: reds
    "nc_matmul": "#fb8072",
    "nc_transpose": "#fccde5",
    # Scalar engine: yellows
    "activation": "#ffffb3",
    "activation_bias": "#ffed6f",
    # Vector engine: greens and purples
    "tensor_tensor": "#ccebc5",
    "tensor_scalar": "#b3de69",
    "tensor_reduce": "#8dd3c7",
    "tensor_row": "#bebada",
    "tensor_column": "#bc80bd",
    # GpSimd engine
    "affine_select": "#e5c494",
}
"""The built-in ops' fills, distinct and grouped by engine."""
PALETTE = ("#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3", "#a6d854", "#ffd92f", "#b3b3b3", "#c7eae5", "#f6e8c3")
"""Fills for other ops (from plugins), none of them a built-in op's."""

TERMINAL_FILL = {"param": "#e0ecf4", "output": "#fde0dd"}
TERMINAL_SHAPE = {"param": "ellipse", "output": "octagon"}
"""Parameters (HBM inputs) and outputs are not statements: their own shapes and fills."""

EDGE_KINDS: Mapping[str, tuple[dict[str, str], str]] = {
    "data": ({}, "data: the region of an intermediate read"),
    "order": ({"style": "dashed", "color": "gray50"}, "ordering: a write after a read or write"),
    "read": ({"color": "#2b8cbe"}, "parameter read: the slice a load reads"),
    "write": ({"color": "#e34a33"}, "output write: the slice a store writes"),
}
"""Edge kind -> (DOT attributes, legend text)."""

STATUS_STYLE: Mapping[str, tuple[str, str, str]] = {
    "same": ("#f7f7f7", "gray55", "unchanged"),
    "changed": ("#fee08b", "#b8860b", "changed: same statement, rewritten inputs"),
    "added": ("#a6d96a", "#1a9850", "added by the rewrite"),
    "removed": ("#f4a582", "#d73027", "removed by the rewrite"),
}
"""Diff status -> (fill, border and edge colour, legend text)."""
STATUSES = ("removed", "added", "changed", "same")


def op_color(op_name: str) -> str:
    """A deterministic fill colour for an op name."""
    if op_name in FIXED:
        return FIXED[op_name]
    digest = blake2b(op_name.encode(), digest_size=2).digest()
    return PALETTE[int.from_bytes(digest, "big") % len(PALETTE)]


def quote(text: str) -> str:
    """A DOT string literal; a newline in ``text`` becomes a DOT line break."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def html_escape(text: str) -> str:
    """Text for an HTML-like DOT label."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def stripes(weights: Mapping[str, int]) -> str:
    """A striped fill (``c1;0.250:c2;0.750``) with one stripe per colour, by weight."""
    total = sum(weights.values())
    if len(weights) == 1:
        return next(iter(weights))
    return ":".join(f"{colour};{count / total:.3f}" for colour, count in weights.items())


def pen_width(count: int) -> str:
    """Merged edges are drawn thicker, logarithmically in how many they stand for."""
    return f"{1 + math.log2(count) / 2:.2f}"
