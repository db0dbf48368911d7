"""Schedule choices as transforms: each match is one alternative schedule.

A ``ScheduleTransform`` offers, for a program, the schedules one choice can give it
(``choices``): every loop order, every block size of every axis, ... Each becomes a
``Match`` whose ``Edit`` sets the schedule, so search explores schedules, prices them
and replays them like any other step; the statements do not change, so a schedule
step needs no numeric check (the search verifies programs by their statements).
Applying one until none is left means nothing -- there is always another loop order
-- so ``saturates`` is False and ``saturate`` refuses them.

A choice, as a plugin author writes it::

    class Unblocked(ScheduleTransform):
        name = "unblocked"

        def choices(self, program, current):
            yield current.replace(blocks=()), "no blocks"
"""

from __future__ import annotations

from collections.abc import Iterable

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.schedule import Schedule
from nkigym_graph.ir.schedule_fit import SCHEDULED_FAMILY
from nkigym_graph.rewriting.transform import Edit, Match, Transform

Choice = tuple[Schedule, str]
"""An alternative schedule and a short description (``"order N, K, M"``)."""


class ScheduleTransform(Transform):
    """Base class of schedule choices: subclasses set ``name`` and write ``choices``."""

    saturates = False

    def choices(self, program: Program, current: Schedule) -> Iterable[Choice]:
        """The schedules this choice can give ``program``, whose schedule is ``current``."""
        raise NotImplementedError

    def analyze(self, program: Program) -> list[Match]:
        """A match per schedule ``choices`` offers (none for a fragment, not a kernel, or a
        program for a target that runs no NKI kernel: neither has a schedule)."""
        if program.fragment or program.target.family != SCHEDULED_FAMILY:
            return []
        current = program.schedule or Schedule()
        seen = {current}
        out = []
        for schedule, detail in self.choices(program, current):
            if schedule in seen:
                continue
            seen.add(schedule)
            edit = Edit(schedule=schedule)
            out.append(Match(self.name, (), edit, detail=detail, program_hash=program.canonical_hash))
        return out
