"""The kernel plan of a scheduled program: its kernel program, the order the kernel runs
it in, and the rotating buffer of every tile.

``kernel_plan(program)`` is what backends emit and cost models price for a program with
a schedule: ``prepare`` (loads cut at block boundaries, PSUM evictions made explicit),
``statement_keys`` and ``keyed_topological_order`` (the block loops), ``allocate``
(streams, slots, reloads; counts from ``buffer_counts``). A schedule
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
from collections.abc import Callable, Hashable, Mapping
from typing import Generic, NamedTuple, TypeVar

from nkigym_graph.ir.arguments import require_program, require_type
from nkigym_graph.ir.axes import program_axes
from nkigym_graph.ir.memo import memo
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.schedule import Schedule, ScheduleError
from nkigym_graph.ir.schedule_fit import LOADED
from nkigym_graph.ir.targets import Target
from nkigym_graph.scheduling.allocate import (
    Step,
    Stream,
    allocate,
    psum_scratch_bytes,
    slot_footprint,
    unlimited_walk,
)
from nkigym_graph.scheduling.loops import loop_axes
from nkigym_graph.scheduling.order import keyed_topological_order, statement_keys
from nkigym_graph.scheduling.prepare import KernelProgram, prepare

T = TypeVar("T")


class _Shared(Generic[T]):
    """The last ``limit`` values built, by key, shared by threads (a value is built
    outside the lock; two threads may build the same one, and either is kept)."""

    def __init__(self, limit: int) -> None:
        self._values: OrderedDict[Hashable, T] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        with self._lock:
            found = self._values.get(key)
            if found is not None:
                self._values.move_to_end(key)
                return found
        value = build()
        with self._lock:
            self._values[key] = value
            while len(self._values) > self._limit:
                self._values.popitem(last=False)
        return value


_PREPARED: _Shared[KernelProgram] = _Shared(16)


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
    overflow: str | None
    """Why its buffers do not fit on chip (None: they fit; ``kernel_plan`` refuses others)."""


def kernel_plan(program: Program, *, overflowing: bool = False) -> KernelPlan:
    """The plan of ``program`` (its schedule, or the default one), once per snapshot.
    A plan whose buffers do not fit on chip is a ``ScheduleError`` unless ``overflowing``
    (a cost model still times it, to rank such schedules among themselves)."""
    require_program(program, "kernel_plan: program", ScheduleError)
    require_type(overflowing, bool, "kernel_plan: overflowing", ScheduleError, "True or False")
    plan = memo(program, "kernel_plan", _plan)
    if plan.overflow is not None and not overflowing:
        raise ScheduleError(plan.overflow)
    return plan


def _plan(program: Program) -> KernelPlan:
    schedule = program.schedule or Schedule()
    ordered = _ordered(program, schedule)
    counts = buffer_counts(schedule, ordered.usage, program.target, psum_scratch_bytes(ordered.kernel))
    allocation = allocate(ordered.kernel, ordered.order, counts, program.target)
    kernel = ordered.kernel
    return KernelPlan(
        program,
        kernel.program,
        schedule,
        allocation.steps,
        allocation.streams,
        kernel.psum,
        allocation.reloads,
        allocation.overflow,
    )


class StreamUsage(NamedTuple):
    """How one stream's tiles are used in a program's kernel order."""

    peak: int
    """Tiles live at once when every tile stays until its last use (no reloads)."""
    per_block: int
    """The most distinct tiles used within one block of the outer loops."""
    slot_bytes: int
    """Bytes per partition one slot takes (a PSUM slot: whole banks)."""
    buffer: str


def stream_usage(program: Program) -> Mapping[str, StreamUsage]:
    """The streams of ``program``'s kernel under its schedule's order and blocks (its
    buffer counts aside), for choosing buffer counts."""
    return _ordered(program, program.schedule or Schedule()).usage


def buffer_counts(
    schedule: Schedule, usage: Mapping[str, StreamUsage], target: Target, psum_reserve: int = 0
) -> dict[str, int]:
    """Every stream's buffer count: the schedule's, or a default that fits on chip (PSUM
    less ``psum_reserve`` bytes per partition of scratch, ``allocate.psum_scratch_bytes``).

    By default a computed stream gets twice the tiles it keeps live (double buffering),
    PSUM streams at most what their banks hold together (the smallest slots first), SBUF
    one more than live; a stream of loaded tiles gets every tile it would keep plus one
    (no reloads). When the SBUF streams do not
    fit, the loaded ones drop to two blocks' worth (double-buffered blocks; tiles reused
    across blocks are loaded again) and then grow, a block at a time, while they fit.
    """
    unknown = sorted(set(dict(schedule.buffers)) - set(usage))
    if unknown:
        raise ScheduleError(
            f"schedule gives buffers for stream(s) {', '.join(map(repr, unknown))}, which this program's "
            f"kernel does not have (its streams: {', '.join(sorted(usage))})"
        )
    room = {"sbuf": target.sbuf_bytes_per_partition, "psum": target.psum_bytes_per_partition - psum_reserve}
    counts: dict[str, int] = {}
    free: list[str] = []
    doubled: list[str] = []
    for name, use in usage.items():
        chosen = schedule.buffer(name)
        if chosen is not None:
            counts[name] = chosen
        elif use.buffer == "psum":
            counts[name] = use.peak
            doubled.append(name)
        elif name.startswith(LOADED):
            counts[name] = use.peak + 1
            free.append(name)
        else:
            counts[name] = use.peak + 1
    psum_left = room["psum"] - sum(counts[n] * u.slot_bytes for n, u in usage.items() if u.buffer == "psum")
    for name in sorted(doubled, key=lambda n: usage[n].slot_bytes):  # PSUM streams share the banks
        use = usage[name]
        extra = max(0, min(use.peak, psum_left // max(use.slot_bytes, 1)))
        counts[name] += extra
        psum_left -= extra * use.slot_bytes

    def used() -> int:
        return sum(counts[n] * u.slot_bytes for n, u in usage.items() if u.buffer == "sbuf")

    if used() <= room["sbuf"] or not free:
        return counts
    for name in free:
        counts[name] = min(counts[name], 2 * usage[name].per_block)
    growing = True
    while growing:
        growing = False
        for name in free:
            use = usage[name]
            step = max(use.per_block, 1)
            if counts[name] + step <= use.peak + 1 and used() + step * use.slot_bytes <= room["sbuf"]:
                counts[name] += step
                growing = True
    return counts


class _Ordered(NamedTuple):
    """What a schedule's blocks and loop orders decide (its buffer counts aside)."""

    kernel: KernelProgram
    order: list[int]
    usage: Mapping[str, StreamUsage]


_ORDERED: _Shared[_Ordered] = _Shared(32)


def _ordered(program: Program, schedule: Schedule) -> _Ordered:
    """The kernel program, its order and stream usage, shared by the schedules that differ
    in buffer counts only (a search moves between them)."""
    key = (
        program.structure_hash,
        program.target.name,
        schedule.blocks,
        schedule.order,
        schedule.inner,
        schedule.ahead,
    )
    return _ORDERED.get(key, lambda: _order(program, schedule))


def _order(program: Program, schedule: Schedule) -> _Ordered:
    kernel = prepared(program, schedule)
    keys = statement_keys(kernel.program, named_in(kernel.program, program, schedule))
    order = keyed_topological_order(kernel.program, keys)
    free = unlimited_walk(kernel, order)
    outer = len(schedule.order)
    blocks: dict[str, dict[tuple[int, ...], set[str]]] = {}
    for step in free.steps:
        block = keys[step.node][:outer]
        for var, slot in step.slots:
            blocks.setdefault(slot.stream, {}).setdefault(block, set()).add(var)
    usage = {}
    for name, stream in free.streams.items():
        widest = max((len(v) for v in blocks.get(name, {}).values()), default=1)
        usage[name] = StreamUsage(
            free.peaks[name], widest, slot_footprint(stream, program.target), stream.buffer
        )
    return _Ordered(kernel, order, usage)


def named_in(kernel_program: Program, program: Program, schedule: Schedule) -> Schedule:
    """``schedule`` with its axes named as ``kernel_program`` names them. The copies the
    kernel program adds (a PSUM eviction after a transpose) can give an axis both
    elementwise roles, and so another name (``output.0`` for ``P``); a parameter's or
    output's dimension lies on the same axis in both programs."""
    source, kernel = program_axes(program).axis_of, program_axes(kernel_program).axis_of
    variables = program.variables
    names: dict[str, str] = {}
    for dim, axis in source.items():
        if dim in kernel and variables[dim[0]].external:
            names.setdefault(axis, kernel[dim])
    if all(names.get(axis, axis) == axis for axis in schedule.axes):
        return schedule

    def renamed(axis: str) -> str:
        return names.get(axis, axis)

    return Schedule(
        order=map(renamed, schedule.order),
        blocks=[(renamed(axis), size) for axis, size in schedule.blocks],
        inner=map(renamed, schedule.inner_order),
        buffers=schedule.buffers,
        ahead=map(renamed, schedule.ahead),
    )


def block_sizes(program: Program, schedule: Schedule) -> dict[str, int]:
    """The block size of every axis of the schedule's loops: its own, or the axis' tile."""
    tiles = loop_axes(program)
    sizes = {axis: schedule.block(axis) or tiles.get(axis) for axis in schedule.order}
    return {axis: size for axis, size in sizes.items() if size is not None}


def prepared(program: Program, schedule: Schedule) -> KernelProgram:
    """``prepare(program, blocks)``, shared by the programs with the same statements and
    blocks (a search moves between schedules of one program)."""
    blocks = block_sizes(program, schedule)
    key = (program.structure_hash, tuple(sorted(blocks.items())))
    return _PREPARED.get(key, lambda: prepare(program, blocks))
