"""Kernel timing: a model of one NeuronCore's engines and DMA queues running the
instruction stream the simulator executes::

    prof = profile(kernel_source, lhsT, rhs)
    print(prof)                        # total time, MFU, busy engines, top stalls
    prof.write_trace("kernel.json")    # Perfetto / chrome://tracing
    prof.write_timeline("kernel.svg")  # needs matplotlib (the ``plot`` extra)

Each instruction is priced from one table of constants (:mod:`.constants`), runs on
its engine in program order (DMA: spread over 16 queues) and starts when its engine is
free and the memory it reads (and, for writes, overwrites) is ready (:mod:`.schedule`).
The figures are "profiled", a model calibrated against published hardware
measurements (``benchmarks/calibration.py``); they are not measurements.
"""

from __future__ import annotations

from typing import Any

from nkigym_graph.ir.targets import Target
from nkigym_graph.nki_sim.limits import DEFAULT_MAX_INSTRUCTIONS, DEFAULT_TIMEOUT
from nkigym_graph.nki_sim.timing.constants import TRN2_TIMING, TimingConstants, timing_constants
from nkigym_graph.nki_sim.timing.result import Profile, Stall

__all__ = ["TRN2_TIMING", "Profile", "Stall", "TimingConstants", "profile", "timing_constants"]


def profile(
    kernel_or_source: Any,
    *arrays: Any,
    target: str | Target = "trn2",
    kernel_name: str | None = None,
    max_instructions: int | None = DEFAULT_MAX_INSTRUCTIONS,
    timeout: float | None = DEFAULT_TIMEOUT,
    **kwargs: Any,
) -> Profile:
    """Run an NKI kernel on numpy arrays (as :func:`~nkigym_graph.nki_sim.simulate`) and
    return the :class:`Profile` of the run. ``profile.outputs`` holds the kernel's outputs.
    The kernel runs as Python, with the same limits as ``simulate``."""
    from nkigym_graph.nki_sim.simulator import simulate

    outputs, report = simulate(
        kernel_or_source,
        *arrays,
        target=target,
        kernel_name=kernel_name,
        report=True,
        max_instructions=max_instructions,
        timeout=timeout,
        **kwargs,
    )
    prof: Profile = report.profile
    prof.outputs = outputs
    return prof
