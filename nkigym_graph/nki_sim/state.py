"""The state of the simulation that is running, and how errors find their kernel line.

One :class:`RunState` exists per :meth:`Simulator.run`; the mock ``nki`` functions reach
it through a context variable, so simulations in different threads stay apart.
"""

from __future__ import annotations

import sys
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import FrameType, TracebackType
from typing import Any, NoReturn

import numpy as np

from nkigym_graph.ir.targets import Target
from nkigym_graph.nki_sim.errors import NKISimulationError
from nkigym_graph.nki_sim.memory import AllocRecord
from nkigym_graph.nki_sim.rules import RULES


@dataclass(eq=False)
class RunState:
    """Counters, allocation records and engine registers of one kernel run."""

    target: Target
    filename: str
    max_instructions: int | None = None
    """Refuse the instruction past this count (``limit.instructions``; None: no limit)."""
    step: int = 0
    allocations: int = 0
    instruction: str | None = None
    counts: Counter[str] = field(default_factory=Counter)
    records: list[AllocRecord] = field(default_factory=list)
    scalar_regs: np.ndarray[Any, Any] = field(init=False)
    """Scalar Engine reduction registers (one fp32 per partition) used by ``activation``."""
    timing: Any = None
    """The timing recorder when the run is profiled (:mod:`nkigym_graph.nki_sim.timing`)."""

    def __post_init__(self) -> None:
        self.scalar_regs = np.full(self.target.partition_size, np.nan, dtype=np.float32)

    def begin(self, instruction: str) -> None:
        """Start one instruction: a new step in the live-range clock."""
        self.step += 1
        if self.max_instructions is not None and self.step > self.max_instructions:
            limit = self.max_instructions
            fail("limit.instructions", f"more than {limit} instructions (max_instructions=)", instruction)
        self.instruction = instruction
        self.counts[instruction] += 1


_ACTIVE: ContextVar[RunState | None] = ContextVar("nkigym_nki_sim_run", default=None)


def activate(state: RunState | None) -> Any:
    """Make ``state`` the running simulation; returns a token for :func:`deactivate`."""
    return _ACTIVE.set(state)


def deactivate(token: Any) -> None:
    _ACTIVE.reset(token)


def current() -> RunState:
    """The running simulation (NKI calls outside one are errors)."""
    state = _ACTIVE.get()
    if state is None:
        raise NKISimulationError("simulation.inactive", "NKI objects only work inside nki_sim.simulate()")
    return state


def kernel_line(frame: FrameType | None = None) -> int:
    """The line of the innermost kernel-source frame on the stack (0 if none)."""
    state = _ACTIVE.get()
    if state is None:
        return 0
    f: FrameType | None = frame if frame is not None else sys._getframe(1)
    while f is not None:
        if f.f_code.co_filename == state.filename:
            return f.f_lineno
        f = f.f_back
    return 0


def traceback_line(tb: TracebackType | None, filename: str) -> int:
    """The line of the innermost traceback entry in ``filename`` (0 if none)."""
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def error(
    rule: str, detail: str, instruction: str | None = None, outside: str = "kernel"
) -> NKISimulationError:
    """An error for ``rule`` at the kernel line; the instruction is ``instruction``, else
    the running one, else ``outside`` (e.g. ``"tensor indexing"``)."""
    if rule not in RULES:
        raise KeyError(f"undocumented simulator rule {rule!r}")
    state = _ACTIVE.get()
    name = instruction or (state.instruction if state and state.instruction else outside)
    return NKISimulationError(rule, detail, name, kernel_line(sys._getframe(1)))


def fail(rule: str, detail: str, instruction: str | None = None, outside: str = "kernel") -> NoReturn:
    """Raise :func:`error`."""
    raise error(rule, detail, instruction, outside)
