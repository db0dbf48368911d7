"""The compile-time args a kernel reads to find each weight's columns in the stitched CB.

For weights ``matmul1`` and ``matmul2`` and CB 3 this is::

    [("stitched_weights_cb", 3),
     ("matmul1_col_start_tiles", 0), ("matmul1_width_tiles", 48),
     ("matmul2_col_start_tiles", 48), ("matmul2_width_tiles", 384)]

A kernel reads tiles ``col_start_tiles .. col_start_tiles + width_tiles - 1`` of a
row of the stitched tensor for its matmul.
"""

from __future__ import annotations

import re

from nkigym_graph.ir.arguments import require_type
from nkigym_graph.ir.targets import Target
from nkigym_graph.plugin.registry import get_target
from nkigym_graph.stitching.errors import StitchError
from nkigym_graph.stitching.metadata import StitchMetadata

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_CIRCULAR_BUFFERS = 64
"""The most circular buffers any supported Tenstorrent chip gives a kernel (Blackhole)."""


def compile_time_args(
    metadata: StitchMetadata, cb_id: int | None = None, *, target: Target | str | None = None
) -> list[tuple[str, int]]:
    """``(name, value)`` pairs: the CB id (if given), then each weight's start and width in tiles.

    ``cb_id`` must be below the target's circular-buffer limit (``target.facts
    ["circular_buffer_limit"]``; 64 without a target). Weight names must be C
    identifiers, since they become parts of kernel constant names.
    """
    require_type(metadata, StitchMetadata, "metadata", StitchError, "a StitchMetadata (from stitch_weights)")
    if target is not None:
        target = get_target(target)
    args: list[tuple[str, int]] = []
    if cb_id is not None:
        limit = _MAX_CIRCULAR_BUFFERS
        if target is not None:
            if "circular_buffer_limit" not in target.facts:
                raise StitchError(f"target {target.name} has no circular buffers")
            limit = int(target.facts["circular_buffer_limit"])
        if not isinstance(cb_id, int) or isinstance(cb_id, bool) or not 0 <= cb_id < limit:
            where = f" on {target.name}" if target is not None else ""
            raise StitchError(f"cb_id must be an int in [0, {limit}){where}, got {cb_id!r}")
        args.append(("stitched_weights_cb", cb_id))
    for name, slot in metadata.weights.items():
        if not _IDENTIFIER.fullmatch(name):
            raise StitchError(f"weight name {name!r} is not a C identifier for a compile-time arg")
        args.append((f"{name}_col_start_tiles", slot.col_start_tiles))
        args.append((f"{name}_width_tiles", slot.width_tiles))
    return args
