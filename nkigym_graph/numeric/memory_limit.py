"""How much memory running a program in numpy takes, refused beyond a limit before any
allocation (``interpret``, and search's verifier through it).

The interpreter keeps every variable alive at once: parameters (converted to the
compute dtype), outputs and every on-chip tile, so its footprint is their sum.
``DEFAULT_MAX_BYTES`` bounds it unless the caller passes ``max_bytes`` (None: no limit).
"""

from __future__ import annotations

import math

import numpy as np

from nkigym_graph.errors import ResourceLimitError
from nkigym_graph.ir.dtypes import itemsize
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.variables import OUTPUT

DEFAULT_MAX_BYTES = 4 * 2**30
"""4 GiB: the most ``interpret`` allocates unless told otherwise."""


def interpreter_bytes(program: Program, compute: np.dtype, outputs_in_compute: bool) -> int:
    """The bytes ``interpret`` holds for ``program``: every variable in ``compute``, but
    outputs in their declared dtype unless ``outputs_in_compute``."""
    total = 0
    for info in program.variables.values():
        own = info.kind == OUTPUT and not outputs_in_compute
        total += math.prod(info.shape) * (itemsize(info.dtype) if own else compute.itemsize)
    return total


def check_memory(
    program: Program, compute: np.dtype, outputs_in_compute: bool, max_bytes: int | None, what: str
) -> None:
    """Raise ``ResourceLimitError`` if running ``program`` needs more than ``max_bytes``."""
    if max_bytes is None:
        return
    need = interpreter_bytes(program, compute, outputs_in_compute)
    if need > max_bytes:
        raise ResourceLimitError(
            f"{what}: running {program.name!r} holds {need} bytes of arrays > the limit of "
            f"{max_bytes} bytes (pass max_bytes= to raise it)"
        )
