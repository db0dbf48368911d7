"""Which statement's value each element of an output holds at the end, by node key.

A node key fixes the value a statement writes and, for a statement writing an HBM
tensor, the region it writes (``Program.node_keys``). So where two programs' outputs
are last written by statements of the same key they hold the same values, and a full
check needs to evaluate and compare only the elements whose last writers differ.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> program = tiled_matmul(256, 256, 256)
>>> ids: dict[str, int] = {}
>>> owner = final_owners(program, "output", (256, 256), ids)  # an allocation, then 4 tiles
>>> len(ids), sorted(set(owner.ravel().tolist()))
(5, [1, 2, 3, 4])
"""

from __future__ import annotations

import numpy as np

from nkigym_graph.ir.program import Program


def final_owners(program: Program, var: str, shape: tuple[int, ...], ids: dict[str, int]) -> np.ndarray:
    """Per element of ``var``: the id (in ``ids``, node keys numbered as first met) of the
    last statement writing it, -1 where none does."""
    owner = np.full(shape, -1, dtype=np.int32)
    keys = program.node_keys
    for node in program.writers_of(var):  # program order: later writes win
        region = tuple([slice(start, stop) for start, stop in program[node].dst.slices])
        owner[region] = ids.setdefault(keys[node], len(ids))
    return owner


def writers_owning(
    program: Program, var: str, owner: np.ndarray, mask: np.ndarray, ids: dict[str, int]
) -> list[int]:
    """The statements writing ``var`` whose key ids (in ``ids``) ``owner`` holds where
    ``mask`` is set, in program order."""
    seen = np.zeros(len(ids) + 1, dtype=bool)
    seen[owner[mask] + 1] = True  # -1: no writer
    keys = program.node_keys
    return [node for node in program.writers_of(var) if seen[ids[keys[node]] + 1]]
