"""How much memory running a program in numpy takes, refused beyond a limit before any
allocation (``interpret``, and search's verifier through it).

The interpreter holds the parameters (converted to the compute dtype) and the outputs
throughout, and each on-chip tile from the statement that first mentions it to the one
that last does (``live_ranges``), or to the end when the caller keeps it (every tile,
unless told which variables it wants). Its footprint is the peak of that sum.
``DEFAULT_MAX_BYTES`` bounds it unless the caller passes ``max_bytes`` (None: no limit).
"""

from __future__ import annotations

import math
from collections.abc import Collection

import numpy as np

from nkigym_graph.errors import ResourceLimitError
from nkigym_graph.ir.dtypes import itemsize
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.variables import INTERMEDIATE, OUTPUT

DEFAULT_MAX_BYTES = 4 * 2**30
"""4 GiB: the most ``interpret`` allocates unless told otherwise."""


def live_ranges(program: Program) -> dict[str, tuple[int, int]]:
    """Per on-chip tile, the positions of the first and the last statement mentioning it."""
    ranges: dict[str, tuple[int, int]] = {}
    intermediate = {name for name, info in program.variables.items() if info.kind == INTERMEDIATE}
    for position, stmt in enumerate(program.statements):
        for operand in stmt.operands:
            var = operand.var
            if var in intermediate:
                first = ranges.get(var, (position, position))[0]
                ranges[var] = (first, position)
    return ranges


def dropped_after(program: Program, keep: Collection[str] | None) -> dict[int, list[str]]:
    """Per statement position, the tiles not in ``keep`` that the statement there mentions
    last (what a run that keeps only ``keep`` may drop after it; none when ``keep`` is
    None: every variable is kept)."""
    if keep is None:
        return {}
    dropped: dict[int, list[str]] = {}
    for var, (_, last) in live_ranges(program).items():
        if var not in keep:
            dropped.setdefault(last, []).append(var)
    return dropped


def interpreter_bytes(
    program: Program, compute: np.dtype, outputs_in_compute: bool, keep: Collection[str] | None = None
) -> int:
    """The most bytes ``interpret`` holds at once for ``program``: every variable in
    ``compute``, but outputs in their declared dtype unless ``outputs_in_compute``; a tile
    only while it is live unless it is in ``keep`` (None: every variable is kept)."""
    held = 0
    changes = [0] * (len(program) + 1)
    ranges = live_ranges(program) if keep is not None else {}
    for name, info in program.variables.items():
        own = info.kind == OUTPUT and not outputs_in_compute
        size = math.prod(info.shape) * (itemsize(info.dtype) if own else compute.itemsize)
        span = ranges.get(name)
        if span is None or (keep is not None and name in keep):
            held += size
        else:
            changes[span[0]] += size
            changes[span[1] + 1] -= size
    peak = live = 0
    for change in changes:
        live += change
        peak = max(peak, live)
    return held + peak


def check_memory(
    program: Program,
    compute: np.dtype,
    outputs_in_compute: bool,
    max_bytes: int | None,
    what: str,
    keep: Collection[str] | None = None,
) -> None:
    """Raise ``ResourceLimitError`` if running ``program`` needs more than ``max_bytes``
    (``keep``: as for ``interpreter_bytes``)."""
    if max_bytes is None:
        return
    need = interpreter_bytes(program, compute, outputs_in_compute, keep)
    if need > max_bytes:
        raise ResourceLimitError(
            f"{what}: running {program.name!r} holds {need} bytes of arrays > the limit of "
            f"{max_bytes} bytes (pass max_bytes= to raise it)"
        )
