"""On-chip memory accounting: allocation records and peak live bytes per partition.

A tile is live from the instruction that allocates it to the last instruction that
touches it (the compiler's live range), not until Python drops the last reference, so
rebinding a name in a loop does not count the old and the new tile together. The peak
is found by a sweep over these intervals after the kernel has run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nkigym_graph.nki_sim.buffers import Buffer, Kind


@dataclass(slots=True, eq=False)
class AllocRecord:
    """One allocation: where it came from and its live interval in instruction steps."""

    serial: int
    name: str
    buffer: Buffer
    shape: tuple[int, ...]
    dtype_name: str
    bytes_per_partition: int
    instruction: str
    line: int
    first: int
    last: int

    def describe(self) -> str:
        dims = "x".join(str(d) for d in self.shape)
        label = f"'{self.name}' " if self.name else ""
        return f"{label}{self.buffer.label} tile [{dims}] {self.dtype_name} (line {self.line})"


@dataclass(frozen=True, slots=True)
class Peak:
    """Peak live bytes per partition of one buffer kind, and where it first overflowed."""

    bytes: int
    overflow: AllocRecord | None
    overflow_bytes: int
    live_at_overflow: int


def peak_usage(records: Iterable[AllocRecord], kind: Kind, capacity: int) -> Peak:
    """Sweep the live intervals of ``kind`` allocations; note the first one past capacity."""
    events: list[tuple[int, int, int, AllocRecord]] = []
    for rec in records:
        if rec.buffer.kind == kind:
            events.append((rec.first, 1, rec.bytes_per_partition, rec))
            events.append((rec.last + 1, 0, -rec.bytes_per_partition, rec))
    events.sort(key=lambda e: (e[0], e[1], e[3].serial))
    total = peak = live = 0
    overflow: AllocRecord | None = None
    overflow_bytes = overflow_live = 0
    for _, is_start, delta, rec in events:
        total += delta
        live += 1 if is_start else -1
        peak = max(peak, total)
        if is_start and overflow is None and total > capacity:
            overflow, overflow_bytes, overflow_live = rec, total, live
    return Peak(peak, overflow, overflow_bytes, overflow_live)
