"""What a circular-buffer count holds: per-kernel buffers, the count against a limit, the error.

See :mod:`~nkigym_graph.stitching.circular_buffers` for how they are counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from nkigym_graph.errors import NkigymError
from nkigym_graph.ir.targets import Target


class CircularBufferError(NkigymError):
    """A kernel that needs more circular buffers than its chip has, or no CB limit to count against."""


@dataclass(frozen=True)
class KernelBuffers:
    """The circular buffers of one kernel (a graph op, or a whole program), by what they hold."""

    name: str
    inputs: tuple[str, ...]
    intermediates: tuple[str, ...]
    outputs: tuple[str, ...]
    weight_groups: tuple[tuple[str, ...], ...] = ()
    """Inputs that are matmul weights stitchable into one tensor (one group per tensor)."""

    @property
    def stitch_savings(self) -> int:
        """CBs that stitching each weight group into one tensor would free."""
        return sum(len(group) - 1 for group in self.weight_groups)

    @property
    def total(self) -> int:
        """Circular buffers this kernel needs."""
        return len(self.inputs) + len(self.intermediates) + len(self.outputs)

    def summary(self) -> str:
        """``"34 (17 inputs, 16 intermediates, 1 output)"``."""
        parts = [
            _plural(len(self.inputs), "input"),
            _plural(len(self.intermediates), "intermediate"),
            _plural(len(self.outputs), "output"),
        ]
        return f"{self.total} ({', '.join(parts)})"


@dataclass(frozen=True)
class CircularBufferCount:
    """CB counts of every kernel against ``limit``; the totals are those of the busiest kernel."""

    total: int
    inputs: int
    intermediates: int
    outputs: int
    kernel: str
    """Name of the busiest kernel (the one ``total`` counts; empty if there is none)."""
    kernels: tuple[KernelBuffers, ...]
    limit: int
    arch: str

    @property
    def fits(self) -> bool:
        """Whether every kernel is within the limit."""
        return all(k.total <= self.limit for k in self.kernels)

    @property
    def over_limit(self) -> tuple[KernelBuffers, ...]:
        """The kernels that need more CBs than the limit."""
        return tuple(k for k in self.kernels if k.total > self.limit)

    @classmethod
    def of(cls, kernels: tuple[KernelBuffers, ...], limit: int, arch: str) -> CircularBufferCount:
        """The count for ``kernels``; the totals are the busiest one's (the earliest of ties)."""
        busiest = max(kernels, key=lambda k: k.total, default=KernelBuffers("", (), (), ()))
        return cls(
            total=busiest.total,
            inputs=len(busiest.inputs),
            intermediates=len(busiest.intermediates),
            outputs=len(busiest.outputs),
            kernel=busiest.name,
            kernels=kernels,
            limit=limit,
            arch=arch,
        )


def circular_buffer_limit(target: Target) -> int:
    """Circular buffers per kernel on ``target``; CircularBufferError if it has none."""
    limit = target.facts.get("circular_buffer_limit")
    if limit is None:
        raise CircularBufferError(
            f"target {target.name} has no circular buffers (no circular_buffer_limit fact); "
            "count against a Tenstorrent arch: wormhole_b0, blackhole or grayskull"
        )
    return int(limit)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
