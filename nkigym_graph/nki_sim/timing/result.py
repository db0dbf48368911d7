"""The profile of one kernel run: a timing *model* of its instruction stream.

Figures are "profiled": they come from :mod:`.schedule` pricing each instruction with
the constants of :mod:`.constants`, never from hardware.
"""

from __future__ import annotations

import json
import linecache
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nkigym_graph.errors import NkigymError
from nkigym_graph.nki_sim.memory import AllocRecord
from nkigym_graph.nki_sim.timing.constants import TimingConstants
from nkigym_graph.nki_sim.timing.recorder import COMPUTE_ENGINES, DMA, Event
from nkigym_graph.nki_sim.timing.schedule import Slice, Span, Timed, dma_track, expand

_BOUND_AT = 0.6
"""An engine busy this share of the run is the critical resource; below it, the run
is limited by dependency stalls (latency)."""


@dataclass(frozen=True)
class Stall:
    """Time instructions on one line spent waiting for inputs from another line."""

    line: int
    instruction: str
    waited_on_line: int
    waited_on: str
    total_ns: float
    count: int

    def __str__(self) -> str:
        return (
            f"line {self.line} {self.instruction} waited {self.total_ns / 1000:.2f} us "
            f"({self.count}x) for line {self.waited_on_line} {self.waited_on}"
        )


@dataclass
class Profile:
    """Timing of one kernel run on the engine / DMA model (see module docstring).

    ``total_ns`` the run's length; ``mfu`` matmul FLOPs over the target's peak for the
    matmul input dtype; ``busy_ns`` per engine (``DMA``: mean over the queues);
    ``dma_bytes`` moved and ``dma_gbps`` their effective bandwidth over the run;
    ``critical`` the resource that limits it; ``stalls`` the largest waits.
    """

    target: str
    constants: TimingConstants
    filename: str
    events: list[Event]
    records: list[AllocRecord]
    timed: list[Timed | None]
    spans: list[Span]
    """The schedule's slices, compact (:data:`~.schedule.Span`); ``slices`` expands them."""
    total_ns: float
    flops: float
    dtype: str
    busy_ns: dict[str, float]
    dma_bytes: int
    stalls: list[Stall] = field(default_factory=list)
    outputs: Any = None
    """The kernel's outputs (set by :func:`~nkigym_graph.nki_sim.timing.profile`)."""
    _slices: list[Slice] | None = field(default=None, repr=False, compare=False)

    @property
    def slices(self) -> list[Slice]:
        """One :class:`~.schedule.Slice` per instruction and track it ran on, in schedule order."""
        if self._slices is None:
            self._slices = expand(self.spans)
        return self._slices

    # -- figures ------------------------------------------------------------------
    @property
    def total_us(self) -> float:
        return self.total_ns / 1000.0

    @property
    def peak_tflops(self) -> float:
        return self.constants.peak_tflops(self.dtype)

    @property
    def mfu(self) -> float:
        """Matmul FLOPs / (time x peak TFLOP/s for the dtype), as a fraction."""
        if self.total_ns <= 0 or self.flops <= 0:
            return 0.0
        return self.flops / (self.total_ns * 1e-9) / (self.peak_tflops * 1e12)

    @property
    def utilisation(self) -> dict[str, float]:
        total = self.total_ns or 1.0
        return {engine: busy / total for engine, busy in self.busy_ns.items()}

    @property
    def dma_gbps(self) -> float:
        return self.dma_bytes / self.total_ns if self.total_ns else 0.0

    @property
    def instructions(self) -> int:
        return sum(1 for t in self.timed if t is not None)

    @property
    def critical(self) -> str:
        """``"Tensor-bound"``, ``"DMA-bound"``, ... or ``"dependency stalls"``."""
        engine, share = max(self.utilisation.items(), key=lambda kv: kv[1])
        return f"{engine}-bound" if share >= _BOUND_AT else "dependency stalls"

    def summary(self) -> str:
        """A few lines for people; says it is a model."""
        util = self.utilisation
        busy = ", ".join(
            f"{engine} {self.busy_ns[engine] / 1000:.1f} us ({util[engine]:.0%})" for engine in self.busy_ns
        )
        dtype = self.dtype or "no matmul"
        lines = [
            f"{self.target}, profiled (timing model of the simulated instruction stream, not measured): "
            f"{self.total_us:.2f} us, MFU {self.mfu:.1%} of {self.peak_tflops:.1f} TFLOP/s ({dtype}), "
            f"{self.critical}",
            f"  {self.instructions} instructions; busy: {busy}",
            f"  DMA {self.dma_bytes / 2**20:.2f} MiB at {self.dma_gbps:.0f} GB/s effective",
        ]
        if self.stalls:
            lines.append("  top stalls:")
            lines.extend(f"    {s}" for s in self.stalls)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def reprice(self, constants: TimingConstants) -> Profile:
        """The same instruction stream priced with other constants (no re-simulation)."""
        from nkigym_graph.nki_sim.timing.run import price

        repriced = price(self.target, constants, self.filename, self.events, self.records)
        repriced.outputs = self.outputs
        return repriced

    # -- pictures -----------------------------------------------------------------
    def _label(self, event: Event) -> str:
        text = linecache.getline(self.filename, event.line).strip() if event.line else ""
        if len(text) > 80:
            text = text[:77] + "..."
        return f"{event.line}: {text}" if text else f"{event.line}: {event.name}"

    def trace_events(self) -> dict[str, Any]:
        """The Chrome / Perfetto trace-event document (``traceEvents``, times in us)."""
        tracks = _tracks(self.slices, self.constants.dma_queues)
        out: list[dict[str, Any]] = [
            {
                "name": "process_name",
                "ph": "M",
                "pid": 1,
                "tid": 0,
                "args": {"name": f"NeuronCore ({self.target}, profiled model)"},
            }
        ]
        for tid, track in enumerate(tracks, start=1):
            out.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": track}})
            out.append(
                {"name": "thread_sort_index", "ph": "M", "pid": 1, "tid": tid, "args": {"sort_index": tid}}
            )
        tid_of = {track: tid for tid, track in enumerate(tracks, start=1)}
        labels: dict[int, str] = {}
        for s in self.slices:
            event = self.events[s.event]
            label = labels.get(s.event)
            if label is None:
                label = labels[s.event] = self._label(event)
            args: dict[str, Any] = {"instruction": event.name, "line": event.line}
            if event.engine == DMA:
                args["bytes"] = event.bytes
            out.append(
                {
                    "name": label,
                    "cat": event.engine,
                    "ph": "X",
                    "ts": s.start / 1000.0,
                    "dur": (s.end - s.start) / 1000.0,
                    "pid": 1,
                    "tid": tid_of[s.track],
                    "args": args,
                }
            )
        return {"traceEvents": out, "displayTimeUnit": "ns", "otherData": {"model": self.summary()}}

    def write_trace(self, path: str | Path) -> Path:
        """Write Chrome / Perfetto trace-event JSON (open in ui.perfetto.dev or chrome://tracing)."""
        target = Path(path)
        target.write_text(json.dumps(self.trace_events()))
        return target

    def write_timeline(self, path: str | Path, max_dma_queues: int = 2) -> Path:
        """Draw a per-engine Gantt chart (SVG, PNG or PDF by suffix) with matplotlib.

        Shows the compute engines and the first ``max_dma_queues`` DMA queues (the
        others look alike for full-partition transfers). Needs the ``plot`` extra."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise NkigymError(
                "write_timeline needs matplotlib: pip install 'nkigym-graph[plot]' "
                "(write_trace needs nothing)"
            ) from None
        tracks = _tracks(self.slices, max_dma_queues)
        rows = {track: i for i, track in enumerate(reversed(tracks))}
        per_track: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for s in self.slices:
            if s.track in rows:
                per_track[s.track].append((s.start / 1000.0, (s.end - s.start) / 1000.0))
        colors = {"Tensor": "tab:red", "Vector": "tab:blue", "Scalar": "tab:green", "GpSimd": "tab:purple"}
        fig, ax = plt.subplots(figsize=(10, 0.45 * len(tracks) + 1.2))
        for track, bars in per_track.items():
            color = colors.get(track, "tab:gray")
            ax.broken_barh(bars, (rows[track] - 0.4, 0.8), facecolors=color)
        ax.set_yticks(list(rows.values()), list(rows.keys()))
        ax.set_xlabel("time (us, profiled model)")
        ax.set_xlim(0, self.total_us * 1.01)
        ax.set_title(f"{self.target}: {self.total_us:.1f} us, MFU {self.mfu:.1%} (profiled, not measured)")
        fig.tight_layout()
        target = Path(path)
        fig.savefig(target)
        plt.close(fig)
        return target


def _tracks(slices: list[Slice], dma_queues: int) -> list[str]:
    """The compute engines, then each DMA queue's inbound and outbound ring."""
    return [*COMPUTE_ENGINES, *(dma_track(q, d) for q in range(dma_queues) for d in ("in", "out"))]


def build_profile(
    target: str,
    constants: TimingConstants,
    filename: str,
    events: list[Event],
    records: list[AllocRecord],
    timed: list[Timed | None],
    spans: list[Span],
) -> Profile:
    """Sum up a schedule into a :class:`Profile`."""
    total = max((t.end for t in timed if t is not None), default=0.0)
    busy: dict[str, float] = {engine: 0.0 for engine in COMPUTE_ENGINES}
    dma_busy = {"in": 0.0, "out": 0.0}
    for tracks, start, end, _ in spans:
        if isinstance(tracks, str) and not tracks.startswith("DMA"):
            busy[tracks] += end - start
            continue
        names = (tracks,) if isinstance(tracks, str) else tracks
        direction = names[0].rsplit(" ", 1)[1]
        for _ in names:  # per track, in order: the same sum as slice by slice
            dma_busy[direction] += end - start
    busy[DMA] = max(dma_busy.values()) / constants.dma_queues
    flops = sum(e.flops for e in events)
    dtypes: dict[str, float] = defaultdict(float)
    for e in events:
        if e.flops:
            dtypes[e.dtype] += e.flops
    dtype = max(dtypes.items(), key=lambda kv: kv[1])[0] if dtypes else ""
    dma_bytes = sum(e.bytes for e in events if e.engine == DMA)
    return Profile(
        target, constants, filename, events, records, timed, spans, total, flops, dtype, busy, dma_bytes,
        _top_stalls(events, timed),
    )  # fmt: skip


def _top_stalls(events: list[Event], timed: list[Timed | None], count: int = 5) -> list[Stall]:
    waits: dict[tuple[int, str, int, str], list[float]] = defaultdict(lambda: [0.0, 0])
    for event, t in zip(events, timed, strict=True):
        if t is None or event.engine == DMA or t.blocker < 0 or t.ready <= t.engine_free:
            continue
        blocker = events[t.blocker]
        entry = waits[(event.line, event.name, blocker.line, blocker.name)]
        entry[0] += t.ready - t.engine_free
        entry[1] += 1
    ranked = sorted(waits.items(), key=lambda kv: -kv[1][0])[:count]
    return [Stall(k[0], k[1], k[2], k[3], v[0], int(v[1])) for k, v in ranked]
