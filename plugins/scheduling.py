"""The schedule choices search explores (``nkigym_graph.ir.schedule``), one transform each.

Every match is an alternative schedule of the same statements:

``loop_order``
    the order of the block loops: every permutation of the program's loop axes (the
    axes with more than one tile), ``order=N,M,K`` -> ``order=N,K,M``, ...
``inner_order``
    the order of the tiles inside a block: every permutation (or the block order; past
    three loop axes, the block order with one axis moved innermost).
``block_size``
    one block loop's size: its axis' tile (the default) times a power of two, up to the
    whole axis (``blocks=...`` gains or changes ``K:1024``).
``buffer_count``
    one stream's rotating buffers: the tiles it uses in one block (single buffering),
    twice that (double buffering), three and four times, every tile it would keep
    (no reloads), or half / twice the current count -- those that fit on chip, and for
    computed tiles (which cannot be loaded again) at least as many as are live at once.
``run_ahead``
    a block loop runs ahead (``ahead=M``): what each block does before the next loop
    (the loads and on-chip transposes of its rows, their row statistics) runs during
    the block before it, or no loop runs ahead -- offered for the loops where it moves
    something (``nkigym_graph.scheduling.order``).

Before (the tiled matmul, no schedule: program order, a buffer per tile)::

    def matmul(a, b):
        ...

After ``loop_order`` (``order=N,M,K``), ``block_size`` (``blocks=...,N:512``) and
``buffer_count`` (``buffers=psum:8``)::

    @nkigym.schedule("order=N,M,K blocks=N:512 buffers=psum:8")
    def matmul(a, b):
        ...
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from nkigym_graph import hookimpl
from nkigym_graph.ir.axes import program_axes
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.schedule import Schedule, ScheduleError
from nkigym_graph.ir.schedule_fit import LOADED
from nkigym_graph.rewriting.transform import Transform
from nkigym_graph.scheduling.choice import Choice, ScheduleTransform
from nkigym_graph.scheduling.loops import loop_axes
from nkigym_graph.scheduling.order import run_ahead_axes
from nkigym_graph.scheduling.plan import stream_usage

MAX_PERMUTED_AXES = 5
"""Loop orders are offered for programs with at most this many loop axes (5! = 120)."""
MAX_INNER_PERMUTED_AXES = 3
"""Every inner order is offered up to this many loop axes; beyond, the inner orders that
move one axis innermost (a chain's four axes: 4 choices instead of 24)."""


class LoopOrder(ScheduleTransform):
    """Order of the block loops: every permutation of the loop axes in which the loops
    that run ahead are not innermost (each runs ahead into the next loop); block sizes of
    axes it leaves out, which size no loop, go."""

    name = "loop_order"

    def choices(self, program: Program, current: Schedule) -> Iterator[Choice]:
        axes = list(loop_axes(program))
        if len(axes) > MAX_PERMUTED_AXES:
            return
        for order in itertools.permutations(axes):
            if all(axis in order[:-1] for axis in current.ahead):
                blocks = [(axis, size) for axis, size in current.blocks if axis in order]
                yield current.replace(order=order, blocks=blocks), f"order {', '.join(order)}"


class InnerOrder(ScheduleTransform):
    """Order of the tiles inside a block: every permutation of the loop axes (for many
    axes, the block order with one axis moved innermost)."""

    name = "inner_order"

    def choices(self, program: Program, current: Schedule) -> Iterator[Choice]:
        axes = list(loop_axes(program))
        if len(axes) > MAX_PERMUTED_AXES or not current.order:
            return
        yield current.replace(inner=()), "inner as the block order"
        if len(axes) <= MAX_INNER_PERMUTED_AXES:
            orders: Iterable[tuple[str, ...]] = itertools.permutations(axes)
        else:
            base = [a for a in current.order if a in axes] + [a for a in axes if a not in current.order]
            orders = ((*(a for a in base if a != last), last) for last in base)
        for order in orders:
            yield current.replace(inner=order), f"inner {', '.join(order)}"


class BlockSize(ScheduleTransform):
    """One block loop's size: its axis' tile (the default) times a power of two, or the
    whole axis."""

    name = "block_size"

    def choices(self, program: Program, current: Schedule) -> Iterator[Choice]:
        sizes = program_axes(program).sizes
        for axis, tile in loop_axes(program).items():
            if axis not in current.order:
                continue
            yield current.with_block(axis, None), f"{axis} in blocks of one tile ({tile})"
            size = 2 * tile
            while size < sizes[axis]:
                yield current.with_block(axis, size), f"{axis} in blocks of {size}"
                size *= 2
            yield current.with_block(axis, sizes[axis]), f"{axis} in one block"


class BufferCount(ScheduleTransform):
    """One stream's rotating buffers (see the module docstring)."""

    name = "buffer_count"

    def choices(self, program: Program, current: Schedule) -> Iterator[Choice]:
        try:
            usage = stream_usage(program)
        except ScheduleError:
            return
        target = program.target
        capacity = {"sbuf": target.sbuf_bytes_per_partition, "psum": target.psum_bytes_per_partition}
        for name, use in sorted(usage.items()):
            now = current.buffer(name) or use.peak + 1
            most = capacity[use.buffer] // max(use.slot_bytes, 1)
            wanted = {use.per_block * k for k in (1, 2, 3, 4)} | {use.peak + 1, now // 2, now * 2}
            fewest = 1 if name.startswith(LOADED) else use.peak  # computed tiles cannot be reloaded
            for count in sorted(c for c in wanted if fewest <= c <= most and c != now):
                yield current.with_buffer(name, count), f"{name}: {count} buffers"


class RunAhead(ScheduleTransform):
    """One block loop running ahead, or none (see the module docstring)."""

    name = "run_ahead"

    def choices(self, program: Program, current: Schedule) -> Iterator[Choice]:
        yield current.replace(ahead=()), "no loop runs ahead"
        for axis in run_ahead_axes(program, current):
            yield current.replace(ahead=(axis,)), f"{axis} runs ahead"


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [LoopOrder, InnerOrder, BlockSize, BufferCount, RunAhead]
