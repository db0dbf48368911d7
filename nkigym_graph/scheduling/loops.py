"""The loop axes of a program: the axes a kernel loops over, and the tile of each.

An axis is a *loop axis* when it has more than one tile; its *tile* is the smallest
extent a computing statement (not a load, store or allocation) has along it -- after
merges, the widest a matmul's N grew to, say. A schedule's block loops run over loop
axes; an axis the schedule gives no block size is blocked by its tile (one block per
tile), and ``blocks`` coarsen that.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> loop_axes(tiled_matmul(256, 128, 512))
{'M': 128, 'N': 128}
"""

from __future__ import annotations

from nkigym_graph.ir.axes import DATA_MOVEMENT, program_axes
from nkigym_graph.ir.memo import memo
from nkigym_graph.ir.program import STATEMENTS_KEY, Program


def loop_axes(program: Program) -> dict[str, int]:
    """Every loop axis with its tile, in name order (see the module docstring)."""
    return dict(memo(program, (STATEMENTS_KEY, "loop_axes"), _loop_axes))


def _loop_axes(program: Program) -> dict[str, int]:
    axes = program_axes(program)
    tiles: dict[str, int] = {}
    for node, stmt in program.items():
        if stmt.op.name in DATA_MOVEMENT:
            continue
        for axis, (lo, hi) in axes.box(node).items():
            tiles[axis] = min(tiles.get(axis, hi - lo), hi - lo)
    return {a: t for a, t in sorted(tiles.items()) if axes.sizes.get(a, 0) > t}
