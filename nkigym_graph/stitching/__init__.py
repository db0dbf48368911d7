"""Weight stitching: several matmuls' weights side by side in one tensor and one CB (seed 003).

:func:`stitch_weights` builds the stitched tensor and its :class:`StitchMetadata`,
:func:`unstitch` cuts it back, :func:`compile_time_args` gives a kernel each weight's
columns, and :func:`shard_shape` the per-core shard over a core grid.

For programs: :func:`find_weights` finds the stitchable matmul weights,
:func:`stitch_program` (the ``weight_stitch`` transform) stitches them into one
parameter, :func:`stitching_of` reads the layout back and :func:`stitch_inputs` builds
the stitched inputs. :func:`circular_buffers` counts a program's or a netlist's
circular buffers against the chip's limit; :func:`check_circular_buffers` raises
:class:`CircularBufferError` over it.
"""

from nkigym_graph.stitching.cb_count import (
    CircularBufferCount,
    CircularBufferError,
    KernelBuffers,
    circular_buffer_limit,
)
from nkigym_graph.stitching.circular_buffers import check_circular_buffers, circular_buffers
from nkigym_graph.stitching.compile_args import compile_time_args
from nkigym_graph.stitching.errors import StitchError
from nkigym_graph.stitching.metadata import StitchMetadata, WeightSlot
from nkigym_graph.stitching.naming import parse_stitched_name, stitch_tile, stitched_name
from nkigym_graph.stitching.program_stitch import stitch_inputs, stitch_program, stitching_of
from nkigym_graph.stitching.sharding import MEMORY_LAYOUTS, Grid, shard_shape
from nkigym_graph.stitching.stitch import WeightSpec, stitch_weights, unstitch
from nkigym_graph.stitching.weight_params import WeightAnalysis, WeightParam, find_weights

__all__ = [
    "MEMORY_LAYOUTS",
    "CircularBufferCount",
    "CircularBufferError",
    "Grid",
    "KernelBuffers",
    "StitchError",
    "StitchMetadata",
    "WeightAnalysis",
    "WeightParam",
    "WeightSlot",
    "WeightSpec",
    "check_circular_buffers",
    "circular_buffer_limit",
    "circular_buffers",
    "compile_time_args",
    "find_weights",
    "parse_stitched_name",
    "shard_shape",
    "stitch_inputs",
    "stitch_program",
    "stitch_tile",
    "stitch_weights",
    "stitched_name",
    "stitching_of",
    "unstitch",
]
