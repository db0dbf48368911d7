"""The loop axes of a program: the axes a kernel loops over, and the tile of each.

An axis is a *loop axis* when it has more than one tile; its *tile* is the smallest
extent a computing statement (not a load, store or allocation) has along it, the last
tile of a ragged axis aside -- after merges, the widest a matmul's N grew to, say
(``nkigym_graph.ir.schedule_fit.axis_tiles``). A schedule's block loops run over loop
axes; an axis the schedule gives no block size is blocked by its tile (one block per
tile), and ``blocks`` coarsen that by whole tiles.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> loop_axes(tiled_matmul(256, 128, 512))
{'M': 128, 'N': 128}
>>> loop_axes(tiled_matmul(1000, 128, 130))  # M: 7 tiles of 128 and one of 104; N: 128, 2
{'M': 128, 'N': 128}
"""

from __future__ import annotations

from nkigym_graph.ir.axes import program_axes
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.schedule_fit import axis_tiles


def loop_axes(program: Program) -> dict[str, int]:
    """Every loop axis with its tile, in name order (see the module docstring)."""
    sizes = program_axes(program).sizes
    return {axis: tile for axis, tile in axis_tiles(program).items() if sizes.get(axis, 0) > tile}
