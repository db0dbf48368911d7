"""The two calls the simulator makes when a run is profiled."""

from __future__ import annotations

import math

from nkigym_graph.nki_sim.errors import NKISimulationError
from nkigym_graph.nki_sim.memory import AllocRecord
from nkigym_graph.nki_sim.state import RunState
from nkigym_graph.nki_sim.timing.constants import TimingConstants, timing_constants
from nkigym_graph.nki_sim.timing.recorder import Event, Recorder
from nkigym_graph.nki_sim.timing.result import Profile, build_profile
from nkigym_graph.nki_sim.timing.schedule import schedule


def timing_recorder() -> Recorder:
    """A recorder for ``RunState.timing``."""
    return Recorder()


def check_psum_banks(records: list[AllocRecord], banks: int, bank_bytes: int) -> None:
    """Live PSUM tiles need at most ``banks`` banks per partition (each tile takes whole
    banks: an accumulation group lives in one bank), else ``psum.banks``."""
    events: list[tuple[int, int, int, AllocRecord]] = []
    for rec in records:
        if rec.buffer.kind == "psum":
            need = max(1, math.ceil(rec.bytes_per_partition / bank_bytes))
            events.append((rec.first, 1, need, rec))
            events.append((rec.last + 1, 0, -need, rec))
    live = 0
    for _, is_start, delta, rec in sorted(events, key=lambda e: (e[0], e[1])):
        live += delta
        if is_start and live > banks:
            raise NKISimulationError(
                "psum.banks",
                f"live PSUM tiles need {live} banks per partition > {banks} "
                f"({bank_bytes} B each) when {rec.describe()} is allocated",
                rec.instruction,
                rec.line,
            )


def profile_of(state: RunState) -> Profile:
    """Schedule the recorded instruction stream of a finished run."""
    recorder = state.timing
    assert isinstance(recorder, Recorder)
    return price(
        state.target.name, timing_constants(state.target), state.filename, recorder.events, state.records
    )


def price(
    target: str, constants: TimingConstants, filename: str, events: list[Event], records: list[AllocRecord]
) -> Profile:
    """Check PSUM banks, schedule ``events`` with ``constants`` and sum up."""
    check_psum_banks(records, constants.psum_banks, constants.psum_bank_bytes)
    timed, spans = schedule(events, records, constants)
    return build_profile(target, constants, filename, events, records, timed, spans)
