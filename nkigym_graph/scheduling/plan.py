"""The kernel plan of a scheduled program: its kernel program, the order the kernel runs
it in, and the rotating buffer of every tile.

``kernel_plan(program)`` is what backends emit and cost models price for a program with
a schedule: ``prepare`` (loads cut at block boundaries, PSUM evictions made explicit),
``schedule_order`` (the block loops), ``allocate`` (streams, slots, reloads). A schedule
that cannot run -- too few buffers for what must stay live, on-chip memory overflowing
-- raises ``ScheduleError`` naming the stream and the limit.

>>> from nkigym_graph import saturate, tile, nc_matmul
>>> program = saturate(tile(nc_matmul, {"lhs": (256, 256), "rhs": (256, 1024)}))
>>> plan = kernel_plan(program.with_schedule("order=N,K,M blocks=N:512 buffers=psum:2"))
>>> plan.streams["psum"].buffers, len(plan.steps) == len(plan.program) + plan.reloads
(2, True)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import NamedTuple

from nkigym_graph.ir.memo import memo
from nkigym_graph.ir.schedule import Schedule
from nkigym_graph.program import Program
from nkigym_graph.scheduling.allocate import Step, Stream, allocate, unlimited_walk
from nkigym_graph.scheduling.order import keyed_topological_order, schedule_order, statement_keys
from nkigym_graph.scheduling.prepare import KernelProgram, prepare

_PREPARED: OrderedDict[tuple[str, tuple[tuple[str, int], ...]], KernelProgram] = OrderedDict()
_PREPARED_LIMIT = 16
_LOCK = threading.Lock()


class KernelPlan(NamedTuple):
    """How a kernel runs a scheduled program (see the module docstring)."""

    source: Program
    """The scheduled program."""
    program: Program
    """The kernel program: the statements the kernel runs."""
    schedule: Schedule
    steps: tuple[Step, ...]
    """Statements of ``program`` in kernel order, with reloads, each with its slots."""
    streams: Mapping[str, Stream]
    psum: frozenset[str]
    """Variables of ``program`` living in PSUM."""
    reloads: int
    """Loads run again because their tile was dropped from a full stream."""


def kernel_plan(program: Program) -> KernelPlan:
    """The plan of ``program`` (its schedule, or the default one), once per snapshot."""
    return memo(program, "kernel_plan", _plan)


def _plan(program: Program) -> KernelPlan:
    schedule = program.schedule or Schedule()
    kernel = prepared(program, schedule)
    order = schedule_order(kernel.program, schedule)
    allocation = allocate(kernel, order, schedule, program.target)
    return KernelPlan(
        program,
        kernel.program,
        schedule,
        allocation.steps,
        allocation.streams,
        kernel.psum,
        allocation.reloads,
    )


def prepared(program: Program, schedule: Schedule) -> KernelProgram:
    """``prepare(program, blocks)``, shared by the programs with the same statements and
    blocks (a search moves between schedules of one program)."""
    key = (program.structure_hash, schedule.blocks)
    with _LOCK:
        found = _PREPARED.get(key)
        if found is not None:
            _PREPARED.move_to_end(key)
            return found
    found = prepare(program, dict(schedule.blocks))
    with _LOCK:
        _PREPARED[key] = found
        while len(_PREPARED) > _PREPARED_LIMIT:
            _PREPARED.popitem(last=False)
    return found


class StreamUsage(NamedTuple):
    """How one stream's tiles are used in a program's kernel order."""

    peak: int
    """Tiles live at once when every tile stays until its last use (no reloads)."""
    per_block: int
    """The most distinct tiles used within one block of the outer loops."""
    slot_bytes: int
    """Bytes per partition of one slot."""
    buffer: str


def stream_usage(program: Program) -> Mapping[str, StreamUsage]:
    """The streams of ``program``'s kernel under its schedule's order and blocks (its
    buffer counts aside), for choosing buffer counts."""
    return memo(program, "stream_usage", _usage)


def _usage(program: Program) -> Mapping[str, StreamUsage]:
    schedule = program.schedule or Schedule()
    kernel = prepared(program, schedule)
    keys = statement_keys(kernel.program, schedule)
    order = keyed_topological_order(kernel.program, keys)
    free = unlimited_walk(kernel, order)
    outer = len(schedule.order)
    blocks: dict[str, dict[tuple[int, ...], set[str]]] = {}
    for step in free.steps:
        block = keys[step.node][:outer]
        for var, slot in step.slots:
            blocks.setdefault(slot.stream, {}).setdefault(block, set()).add(var)
    out = {}
    for name, stream in free.streams.items():
        used = blocks.get(name, {})
        widest = max((len(v) for v in used.values()), default=1)
        out[name] = StreamUsage(free.peaks[name], widest, stream.bytes_per_partition, stream.buffer)
    return out
