"""What a simulation run reports besides the kernel's outputs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SimulationReport:
    """Instruction counts and peak on-chip memory of one run.

    Peaks are live bytes per partition (``shape[1:]`` product x item size, summed over
    tiles whose live range -- allocation to last use -- overlaps).
    """

    target: str
    instructions: int
    instruction_counts: Mapping[str, int]
    allocations: int
    peak_sbuf_bytes: int
    peak_psum_bytes: int
    sbuf_capacity: int
    psum_capacity: int
    profile: Any = None
    """The run's :class:`~nkigym_graph.nki_sim.timing.Profile` (``simulate(..., report=True)``)."""

    def __str__(self) -> str:
        return (
            f"{self.target}: {self.instructions} instructions, "
            f"peak SBUF {self.peak_sbuf_bytes}/{self.sbuf_capacity} B/partition, "
            f"peak PSUM {self.peak_psum_bytes}/{self.psum_capacity} B/partition"
        )
