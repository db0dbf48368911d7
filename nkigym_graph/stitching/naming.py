"""How a program names a stitched weight parameter, so its layout can be read back.

The ``weight_stitch`` transform replaces weights ``w1 [64, 96]`` and ``w2 [128, 32]`` by
one parameter named after them, in column order::

    stitched__w1_64x96__w2_128x32

The name alone gives every weight's name and original ``[K, N]``; the columns follow
from the order, and the padded height from the target's tile (:func:`stitch_tile`).
So the layout survives any later rewrite and any text round trip: it is part of the
program. Weight names taking part must be ``letters/digits`` words joined by single
underscores (:func:`stitchable_name`), which keeps the name unambiguous and every
weight name a C identifier for :func:`~nkigym_graph.stitching.compile_time_args`.

>>> stitched_name([("w1", (64, 96)), ("w2", (128, 32))])
'stitched__w1_64x96__w2_128x32'
>>> parse_stitched_name("stitched__w1_64x96__w2_128x32")
(('w1', (64, 96)), ('w2', (128, 32)))
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nkigym_graph.ir.targets import Target
from nkigym_graph.stitching.errors import StitchError

PREFIX = "stitched"
SEPARATOR = "__"
_WEIGHT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")
_COMPONENT = re.compile(rf"(?P<name>{_WEIGHT_NAME.pattern})_(?P<k>[1-9][0-9]*)x(?P<n>[1-9][0-9]*)")

WeightLayout = tuple[tuple[str, tuple[int, int]], ...]
"""``(name, (K, N))`` of each stitched weight, in column order."""


def stitchable_name(name: str) -> bool:
    """Whether ``name`` can be part of a stitched name (no leading, trailing or double ``_``)."""
    return bool(_WEIGHT_NAME.fullmatch(name))


def stitched_name(weights: Sequence[tuple[str, tuple[int, int]]]) -> str:
    """The stitched parameter's name for ``(name, (K, N))`` weights in column order."""
    if len(weights) < 2:
        raise StitchError(f"a stitched parameter needs at least two weights, got {len(weights)}")
    parts = [PREFIX]
    for name, (k, n) in weights:
        if not stitchable_name(name):
            raise StitchError(
                f"weight name {name!r} cannot be part of a stitched name: use letters and digits "
                "joined by single underscores"
            )
        parts.append(f"{name}_{k}x{n}")
    return SEPARATOR.join(parts)


def parse_stitched_name(name: str) -> WeightLayout | None:
    """The weights a stitched parameter name lists, or None if ``name`` is not one."""
    prefix, *components = name.split(SEPARATOR)
    if prefix != PREFIX or len(components) < 2:
        return None
    layout = []
    for component in components:
        match = _COMPONENT.fullmatch(component)
        if match is None:
            return None
        layout.append((match["name"], (int(match["k"]), int(match["n"]))))
    if len({weight for weight, _ in layout}) != len(layout):
        return None
    return tuple(layout)


def stitch_tile(target: Target) -> tuple[int, int]:
    """The tile a stitched tensor is aligned to on ``target``.

    Tenstorrent targets give their tile (32 x 32): the height is padded to whole tiles
    and each weight's width must be whole tiles. Targets without a tile fact (Trainium,
    whose DMA addresses any column) use ``(1, 1)``: no padding, any width.
    """
    tile = target.facts.get("tile")
    if tile is None:
        return (1, 1)
    height, width = tile
    return (int(height), int(width))


def padded_height(k: int, tile_height: int) -> int:
    """``k`` rounded up to whole tiles."""
    return -(-k // tile_height) * tile_height
