"""How a program names a stitched weight parameter, so its layout can be read back.

The grammar (``stitched__w1_64x96__w2_128x32``: each weight's name and original
``[K, N]``, in column order) is the IR's, ``nkigym_graph.ir.stitched_names``; the
padded height follows from the target's tile (:func:`stitch_tile`). Weight names
taking part must be ``letters/digits`` words joined by single underscores
(:func:`stitchable_name`), which keeps the name unambiguous and every weight name a C
identifier for :func:`~nkigym_graph.stitching.compile_time_args`.

>>> stitched_name([("w1", (64, 96)), ("w2", (128, 32))])
'stitched__w1_64x96__w2_128x32'
>>> parse_stitched_name("stitched__w1_64x96__w2_128x32")
(('w1', (64, 96)), ('w2', (128, 32)))
"""

from __future__ import annotations

from collections.abc import Sequence

from nkigym_graph.ir.stitched_names import (
    PREFIX,
    SEPARATOR,
    WEIGHT_NAME,
    WeightLayout,
    parse_stitched_name,
)
from nkigym_graph.ir.targets import Target
from nkigym_graph.stitching.errors import StitchError

__all__ = ["WeightLayout", "parse_stitched_name", "stitch_tile", "stitchable_name", "stitched_name"]


def stitchable_name(name: str) -> bool:
    """Whether ``name`` can be part of a stitched name (no leading, trailing or double ``_``)."""
    return bool(WEIGHT_NAME.fullmatch(name))


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
