"""Scheduling the recorded instruction stream on the engines and DMA queues.

Each compute engine (Tensor, Vector, Scalar, GpSimd) runs its instructions in program
order, one at a time. A DMA transfer spreads its partitions over the 16 queues
(partition ``p`` on queue ``p mod 16``). Each queue has two rings: inbound (to on-chip
memory: loads) and outbound (to HBM: stores), so a store is not stuck behind every load
issued before it. A ring moves one transfer's rows at a time and fills any gap it has
(transfers waiting for different inputs do not block each other), after the transfer's
fixed latency. A compute instruction waiting for another compute engine's result sees
it ``engine_sync_ns`` after that instruction ends (the semaphore hand-over).

An instruction starts when its engine (or queue) is free and its inputs are ready.
Inputs are memory: it waits for the end of every earlier instruction that wrote a region
it reads (read-after-write), and, when it writes, of every earlier one that read or wrote
an overlapping region (write-after-read, write-after-write). Regions are boxes of
partitions x bytes in a *physical* buffer: tiles allocated outside loops are their own
buffer; tiles allocated by the same kernel line inside a loop share
``loop_tile_buffers`` physical buffers in rotation (see :func:`physical_buffers`).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass

from nkigym_graph.nki_sim.memory import AllocRecord
from nkigym_graph.nki_sim.timing.constants import TimingConstants
from nkigym_graph.nki_sim.timing.recorder import DMA, GPSIMD, PE, SCALAR, VECTOR, Box, Event


@dataclass(slots=True)
class Slice:
    """One instruction's time on one track (an engine or a DMA queue), in ns."""

    track: str
    start: float
    end: float
    event: int


@dataclass(slots=True)
class Timed:
    """When one event ran, and what held it up."""

    start: float
    end: float
    ready: float
    """When its inputs were ready (end of its latest dependency)."""
    engine_free: float
    """When its engine (or, for DMA, its first queue) was free."""
    blocker: int
    """Index into the events of the dependency that ended last (-1: none)."""


def physical_buffers(records: list[AllocRecord], rotation: int) -> dict[int, int]:
    """Map each allocation (by ``id``) to a physical buffer id.

    Allocations from the same site -- kernel line, instruction, buffer, shape, dtype --
    reuse up to ``rotation`` buffers: a new one takes the buffer dead the longest among
    those whose last use came before it, once ``rotation`` exist; otherwise (all busy,
    as when a loop keeps every tile in a list) it gets a new buffer. HBM tensors and
    single allocations are their own buffer.
    """
    mapping: dict[int, int] = {}
    slots: dict[tuple[object, ...], list[list[int]]] = defaultdict(list)
    next_id = 0
    for rec in sorted(records, key=lambda r: r.serial):
        if not rec.buffer.on_chip or rec.line == 0:
            mapping[id(rec)] = next_id
            next_id += 1
            continue
        key = (rec.line, rec.instruction, rec.buffer.kind, rec.shape, rec.dtype_name)
        site = slots[key]
        free = [slot for slot in site if slot[1] < rec.first]
        if len(site) >= rotation and free:
            slot = min(free, key=lambda s: s[1])
            slot[1] = rec.last
            mapping[id(rec)] = slot[0]
            continue
        site.append([next_id, rec.last])
        mapping[id(rec)] = next_id
        next_id += 1
    return mapping


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def _contains(outer: Box, inner: Box) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1] and outer[2] <= inner[2] and inner[3] <= outer[3]


class _Memory:
    """The accesses still relevant for dependencies, per physical buffer."""

    def __init__(self) -> None:
        self.writes: dict[int, dict[Box, tuple[float, int, str]]] = defaultdict(dict)
        self.reads: dict[int, dict[Box, tuple[float, int, str]]] = defaultdict(dict)

    def ready(
        self, reads: list[tuple[int, Box]], writes: list[tuple[int, Box]], engine: str, sync_ns: float
    ) -> tuple[float, int]:
        """(latest end among the dependencies, its event) for these accesses; a result
        from another compute engine arrives ``sync_ns`` later (semaphore hand-over)."""
        best, who = 0.0, -1
        compute = engine != DMA
        for buf, box in reads:
            for other, (end, event, by) in self.writes.get(buf, {}).items():
                if compute and by != engine and by != DMA:
                    end += sync_ns
                if end > best and _overlaps(box, other):
                    best, who = end, event
        for buf, box in writes:
            for table in (self.writes.get(buf, {}), self.reads.get(buf, {})):
                for other, (end, event, by) in table.items():
                    if compute and by != engine and by != DMA:
                        end += sync_ns
                    if end > best and _overlaps(box, other):
                        best, who = end, event
        return best, who

    def commit(
        self, reads: list[tuple[int, Box]], writes: list[tuple[int, Box]], end: float, event: int, engine: str
    ) -> None:
        for buf, box in writes:
            for table in (self.writes[buf], self.reads[buf]):
                for other in [o for o in table if _contains(box, o)]:
                    del table[other]
            self.writes[buf][box] = (end, event, engine)
        for buf, box in reads:
            table = self.reads[buf]
            old = table.get(box)
            if old is None or old[0] < end:
                table[box] = (end, event, engine)


class _Queue:
    """Busy intervals of one DMA queue (sorted, non-overlapping)."""

    __slots__ = ("ends", "starts")

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []

    def copy(self) -> _Queue:
        twin = _Queue()
        twin.starts, twin.ends = list(self.starts), list(self.ends)
        return twin

    def place(self, earliest: float, duration: float) -> float:
        """The earliest start >= ``earliest`` with ``duration`` free; books it."""
        starts, ends = self.starts, self.ends
        i = bisect.bisect_right(ends, earliest)
        t = earliest
        while i < len(starts):
            if t + duration <= starts[i]:
                break
            t = max(t, ends[i])
            i += 1
        starts.insert(i, t)
        ends.insert(i, t + duration)
        return t


def _rows_per_queue(first: int, partitions: int, queues: int) -> dict[int, int]:
    """Partitions ``first .. first + partitions - 1`` spread as ``p mod queues``."""
    base, extra = divmod(partitions, queues)
    rows = {q: base for q in range(queues)} if base else {}
    for i in range(extra):
        q = (first + i) % queues
        rows[q] = rows.get(q, 0) + 1
    return rows


def _spread(first: int, partitions: int, queues: int) -> tuple[tuple[tuple[int, int], ...], bool]:
    """``(queue, rows)`` in queue order for a transfer's partitions, and whether every
    queue gets the same number of rows."""
    rows = _rows_per_queue(first, partitions, queues)
    uniform = len(rows) == queues and len(set(rows.values())) == 1
    return tuple(sorted(rows.items())), uniform


def dma_track(queue: int, direction: str) -> str:
    """The track of one DMA queue's inbound (to SBUF) or outbound (to HBM) ring."""
    return f"DMA {queue} {direction}"


def compute_ns(event: Event, c: TimingConstants) -> float:
    """Time of one compute instruction on its engine, in ns."""
    if event.free:
        return 0.0
    if event.engine == PE:
        columns = max(event.elements, c.pe_min_moving)
        return (c.pe_fixed_cycles + columns * c.pe_cycles_per_column(event.dtype)) / c.pe_clock_ghz
    if event.engine == VECTOR:
        per = c.vector_cycles_per_element_two_inputs if event.inputs >= 2 else c.vector_cycles_per_element
        return (c.vector_fixed_cycles + event.elements * per) / c.vector_clock_ghz
    if event.engine == SCALAR:
        return (c.scalar_fixed_cycles + event.elements * c.scalar_cycles_per_element) / c.scalar_clock_ghz
    if event.engine == GPSIMD:
        return (c.gpsimd_fixed_cycles + event.elements * c.gpsimd_cycles_per_element) / c.gpsimd_clock_ghz
    raise ValueError(f"not a compute engine: {event.engine!r}")


def dma_row_ns(event: Event, c: TimingConstants) -> float:
    """Queue time of one partition row of a transfer, in ns: its bytes at the queue's
    bandwidth plus the overhead of each contiguous run (the size cliff)."""
    chunks = -(-event.bytes_per_partition // max(event.chunk_bytes, 1))
    return event.bytes_per_partition / c.dma_queue_bytes_per_ns + chunks * c.dma_chunk_overhead_ns


Span = tuple[str | tuple[str, ...], float, float, int]
"""Compact slices: ``(track or tracks, start, end, event)``; a transfer that every DMA
queue of a direction runs alike is one span over all their tracks (see :func:`expand`)."""


def expand(spans: list[Span]) -> list[Slice]:
    """The :class:`Slice` s of compact spans, one per track, in schedule order."""
    out: list[Slice] = []
    for tracks, start, end, event in spans:
        if isinstance(tracks, str):
            out.append(Slice(tracks, start, end, event))
        else:
            out.extend(Slice(track, start, end, event) for track in tracks)
    return out


def schedule(
    events: list[Event], records: list[AllocRecord], c: TimingConstants
) -> tuple[list[Timed | None], list[Span]]:
    """Time every event; returns per-event timing (None for those taking no time) and
    the spans per track (compact slices)."""
    phys = physical_buffers(records, c.loop_tile_buffers)
    memory = _Memory()
    engine_free = {PE: 0.0, VECTOR: 0.0, SCALAR: 0.0, GPSIMD: 0.0}
    queues = c.dma_queues
    # While every transfer covers all queues alike, the queues of a direction have the
    # same bookings: they share one _Queue until a transfer tells them apart.
    rings = {d: [_Queue()] * queues for d in ("in", "out")}
    shared = {"in": True, "out": True}
    all_tracks = {d: tuple(dma_track(q, d) for q in range(queues)) for d in ("in", "out")}
    spreads: dict[tuple[int, int], tuple[tuple[tuple[int, int], ...], bool]] = {}
    sync_ns = c.engine_sync_ns
    timed: list[Timed | None] = []
    spans: list[Span] = []
    for i, event in enumerate(events):
        engine = event.engine
        if not engine:
            timed.append(None)
            continue
        reads = [(phys.get(id(rec), -1 - rec.serial), box) for rec, box in event.reads]
        writes = [(phys.get(id(rec), -1 - rec.serial), box) for rec, box in event.writes]
        ready, blocker = memory.ready(reads, writes, engine, sync_ns)
        if engine == DMA:
            fixed = c.dma_fixed_ns_hwdge if event.hwdge else c.dma_fixed_ns
            row = dma_row_ns(event, c)
            key = (event.first_partition, max(event.partitions, 1))
            spread = spreads.get(key)
            if spread is None:
                spread = spreads[key] = _spread(key[0], key[1], queues)
            rows, uniform = spread
            direction = "out" if event.to_hbm else "in"
            ring = rings[direction]
            if shared[direction] and not uniform:
                rings[direction] = ring = [ring[0].copy() for _ in range(queues)]
                shared[direction] = False
            if shared[direction]:  # one booking for every queue
                queue = ring[0]
                first_free = queue.ends[-1] if queue.ends else 0.0
                length = rows[0][1] * row
                start_q = queue.place(ready + fixed, length)
                spans.append((all_tracks[direction], start_q, start_q + length, i))
                end = max(ready, start_q + length)
            else:
                end = ready
                first_free = float("inf")
                tracks = all_tracks[direction]
                for q, n in rows:
                    queue = ring[q]
                    free_at = queue.ends[-1] if queue.ends else 0.0
                    first_free = min(first_free, free_at)
                    start_q = queue.place(ready + fixed, n * row)
                    spans.append((tracks[q], start_q, start_q + n * row, i))
                    end = max(end, start_q + n * row)
            timed.append(Timed(ready, end, ready, first_free, blocker))
        else:
            free_at = engine_free[engine]
            start = max(free_at, ready)
            end = start + compute_ns(event, c)
            engine_free[engine] = end
            if end > start:
                spans.append((engine, start, end, i))
            timed.append(Timed(start, end, ready, free_at, blocker))
        memory.commit(reads, writes, end, i, engine)
    return timed, spans
