"""Per-architecture choices of the emitted netlists: data formats, fidelity, DRAM channels.

The worker grid, NOC count, dest capacity and fused-op limits come from the target's
facts (``nkigym_graph.ir.targets``); these are the netlist settings the targets do not hold.
Grayskull has no Float32 accumulation, so its netlists compute in Float16_b (dest then
holds 8 tiles per ublock); Wormhole B0 and Blackhole use Float32 throughout (4 tiles).
A bfloat16 (float16) program's queues and op data are Float16_b (Float16) on every arch.
The numpy evaluator does not emulate data formats.
"""

from __future__ import annotations

from dataclasses import dataclass

from nkigym_graph.buda.arch import arch_target
from nkigym_graph.buda.rules.limits import dest_tiles
from nkigym_graph.ir.targets import Target

from .errors import BudaEmitError


@dataclass(frozen=True)
class Arch:
    """A Tenstorrent target with the netlist settings used for it."""

    target: Target
    df: str
    """Data format of queues, op inputs/outputs and intermediates."""
    acc_df: str
    math_fidelity: str
    dram_channels: int

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def dest_tiles(self) -> int:
        """Tiles of one ublock that fit in dest with ``acc_df``."""
        return dest_tiles(self.target, self.acc_df)

    @property
    def worker_grid(self) -> tuple[int, int]:
        rows, cols = self.target.facts["grid"]
        return (int(rows), int(cols))

    @property
    def nocs(self) -> int:
        return int(self.target.facts["nocs"])


_SETTINGS: dict[str, tuple[str, str, str, int]] = {
    "grayskull": ("Float16_b", "Float16_b", "HiFi4", 8),
    "wormhole_b0": ("Float32", "Float32", "HiFi4", 6),
    "blackhole": ("Float32", "Float32", "HiFi4", 8),
}


DATA_FORMATS = {"bfloat16": "Float16_b", "float16": "Float16"}
"""Buda data formats of program dtypes narrower than float32 (float32 uses the arch's)."""


def get_arch(target: str | Target, dtype: str | None = None) -> Arch:
    """The netlist settings for a Tenstorrent architecture name or target; a program of
    ``dtype`` bfloat16 or float16 keeps it in queues and op data (``acc_df`` is the arch's)."""
    try:
        resolved = arch_target(target)
    except Exception as err:  # NetlistError for names, or a Trainium target
        raise BudaEmitError(f"no Buda architecture for {target!r}: {err}") from None
    if resolved.name not in _SETTINGS:
        raise BudaEmitError(f"no netlist settings for architecture {resolved.name!r}")
    df, acc_df, fidelity, channels = _SETTINGS[resolved.name]
    return Arch(resolved, DATA_FORMATS.get(str(dtype), df), acc_df, fidelity, channels)
