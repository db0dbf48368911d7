"""Weight stitching: several matmuls' weights side by side in one tensor and one CB (seed 003).

:func:`stitch_weights` builds the stitched tensor and its :class:`StitchMetadata`,
:func:`unstitch` cuts it back, :func:`compile_time_args` gives a kernel each weight's
columns, and :func:`shard_shape` the per-core shard over a core grid.
"""

from nkigym_graph.stitching.compile_args import compile_time_args
from nkigym_graph.stitching.errors import StitchError
from nkigym_graph.stitching.metadata import StitchMetadata, WeightSlot
from nkigym_graph.stitching.sharding import MEMORY_LAYOUTS, Grid, shard_shape
from nkigym_graph.stitching.stitch import WeightSpec, stitch_weights, unstitch

__all__ = [
    "MEMORY_LAYOUTS",
    "Grid",
    "StitchError",
    "StitchMetadata",
    "WeightSlot",
    "WeightSpec",
    "compile_time_args",
    "shard_shape",
    "stitch_weights",
    "unstitch",
]
