"""``CostReport``: what a cost model says about one program.

Every figure is modeled by an analytic cost model, not measured on hardware, and the
report says so when printed. Reports order programs through ``rank``: feasible ones
first (an infeasible program never ranks above a feasible one), then by modeled time,
then by statement count (fewer statements for the same modeled time). A report whose
figures are not numbers, or whose times are not finite and >= 0, is a ``PluginError``
naming the field (a cost model's bug, caught where it is made).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from numbers import Real
from types import MappingProxyType
from typing import Any

from nkigym_graph.errors import PluginError
from nkigym_graph.ir.arguments import describe, require_type

_KIB = 1024
_TEXTS = ("model", "target", "reason", "memory_per")
_NUMBERS = (
    "bytes_moved", "flops", "peak_flops", "knee", "statements", "peak_sbuf_bytes",
    "peak_psum_bytes", "sbuf_capacity", "psum_capacity",
)  # fmt: skip


@dataclass(frozen=True)
class CostReport:
    """The modeled cost of one program on one target (see the module docstring)."""

    model: str
    """Name of the cost model that produced the report."""
    target: str
    seconds: float
    """Modeled run time: the critical path of the engine schedule."""
    engine_seconds: Mapping[str, float]
    """Modeled busy seconds per engine (``dma``: data transfer time on the DMA queues)."""
    bytes_moved: int
    """Bytes moved between HBM and on-chip memory."""
    flops: int
    """Floating-point operations (a multiply-add counts two)."""
    peak_flops: float
    """Peak FLOP/s of the Tensor Engine for the program's matmul input dtype."""
    knee: float
    """Roofline knee in FLOP/byte: ``peak_flops`` over the DMA bandwidth."""
    statements: int
    peak_sbuf_bytes: int
    """Largest live on-chip scratchpad use, bytes per partition."""
    peak_psum_bytes: int
    """Largest live accumulator (PSUM) use, bytes per partition."""
    sbuf_capacity: int
    psum_capacity: int
    feasible: bool = True
    reason: str = ""
    """Why the program does not fit (empty when feasible)."""
    memories: tuple[str, str] = ("SBUF", "PSUM")
    """The target's names for the two on-chip memories the peaks and capacities are of
    (the scratchpad, then the accumulator; an empty accumulator name when the model does
    not track one: it is left out of the text)."""
    memory_per: str = "partition"
    """What the peaks and capacities are per (a partition, a core)."""

    def __post_init__(self) -> None:
        for name in _TEXTS:
            require_type(getattr(self, name), str, f"CostReport {name}", PluginError, "a str")
        if not _two_names(self.memories):
            got = describe(self.memories)
            raise PluginError(f"CostReport memories must be two names (str, str), got {got}")
        require_type(self.feasible, bool, "CostReport feasible", PluginError, "True or False")
        require_type(self.engine_seconds, Mapping, "CostReport engine_seconds", PluginError, "a mapping")
        for name in _NUMBERS:
            _number(f"CostReport {name}", getattr(self, name))
        _seconds("CostReport seconds", self.seconds)
        for engine, seconds in self.engine_seconds.items():
            _seconds(f"CostReport engine_seconds[{engine!r}]", seconds)
        object.__setattr__(self, "engine_seconds", MappingProxyType(dict(self.engine_seconds)))

    def __reduce__(self) -> tuple[Any, ...]:
        # the read-only mapping does not pickle; rebuild from a plain dict (process pools)
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["engine_seconds"] = dict(self.engine_seconds)
        return (_rebuild, (values,))

    @property
    def mfu(self) -> float:
        """Modeled model-FLOPs utilisation: ``flops / seconds / peak_flops`` (0 when idle)."""
        if self.seconds <= 0 or self.peak_flops <= 0:
            return 0.0
        return self.flops / self.seconds / self.peak_flops

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOP per byte moved (infinite when nothing moves)."""
        return self.flops / self.bytes_moved if self.bytes_moved else float("inf")

    @property
    def bound(self) -> str:
        """``"compute"`` or ``"memory"``: which side of the roofline knee the program is on."""
        return "compute" if self.intensity >= self.knee else "memory"

    @property
    def rank(self) -> tuple[int, int, int]:
        """Sort key, lower is better: feasibility, modeled picoseconds, statements."""
        return (0 if self.feasible else 1, round(self.seconds * 1e12), self.statements)

    def better_than(self, other: CostReport) -> bool:
        """Whether this program ranks strictly before ``other``."""
        return self.rank < other.rank

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly summary."""
        return {
            "model": self.model,
            "target": self.target,
            "seconds": self.seconds,
            "mfu": self.mfu,
            "bound": self.bound,
            "engine_seconds": dict(self.engine_seconds),
            "bytes_moved": self.bytes_moved,
            "flops": self.flops,
            "feasible": self.feasible,
            "reason": self.reason,
            "peak_sbuf_bytes": self.peak_sbuf_bytes,
            "peak_psum_bytes": self.peak_psum_bytes,
            "statements": self.statements,
            "measured": False,
        }

    def __str__(self) -> str:
        engines = ", ".join(f"{name} {_time(s)}" for name, s in sorted(self.engine_seconds.items()))
        fit = "feasible" if self.feasible else f"INFEASIBLE: {self.reason}"
        model = "" if self.model == self.target else f" {self.model!r}"
        return (
            f"{self.target}, modeled (analytic cost model{model}), not measured: "
            f"{_time(self.seconds)}, MFU {self.mfu:.1%} of {self.peak_flops / 1e12:.1f} TFLOP/s, "
            f"{self.bound}-bound ({self.intensity:.0f} FLOP/B, knee {self.knee:.0f}); "
            f"{self.bytes_moved / 2**20:.2f} MiB moved, {self.flops / 1e9:.3f} GFLOP; "
            f"busy: {engines}; {self._memory_text()}; {fit}"
        )

    def _memory_text(self) -> str:
        scratchpad, accumulator = self.memories
        text = f"{scratchpad} {_use(self.peak_sbuf_bytes, self.sbuf_capacity)}"
        if accumulator:
            text += f" and {accumulator} {_use(self.peak_psum_bytes, self.psum_capacity)}"
        return f"{text} per {self.memory_per}"


def _two_names(memories: Any) -> bool:
    return isinstance(memories, tuple) and len(memories) == 2 and all(isinstance(m, str) for m in memories)


def _use(peak: float, capacity: float) -> str:
    """``peak/capacity KiB``."""
    return f"{peak / _KIB:.1f}/{capacity / _KIB:.0f} KiB"


def _number(name: str, value: Any) -> float:
    """``value`` if it is a real number (not nan)."""
    if isinstance(value, bool) or not isinstance(value, Real) or math.isnan(value):
        raise PluginError(f"{name} must be a number, got {describe(value)}")
    return float(value)


def _seconds(name: str, value: Any) -> None:
    """Refuse a time that is not a finite number >= 0."""
    if not 0 <= _number(name, value) < math.inf:
        raise PluginError(f"{name} must be a finite number of seconds >= 0, got {describe(value)}")


def _time(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.2f} us"


def _rebuild(values: dict[str, Any]) -> CostReport:
    return CostReport(**values)
