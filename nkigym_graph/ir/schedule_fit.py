"""Whether a schedule fits a program: checked where a schedule is given, kept true by rewrites.

A schedule (``nkigym_graph.ir.schedule``) says how an NKI kernel runs the statements, so
only a program for an AWS Neuron target (family ``neuron``) takes one: the Buda backend and
the Tenstorrent cost model would ignore it. It names axes and streams by name, so whether
it fits depends on the program it is given to. Three rules need only the statements:

``ahead``
    a loop runs ahead into the next loop of ``order``: it must be a loop of ``order``
    other than the innermost.
``blocks``
    a block size sizes a block loop, so its axis is a loop of ``order`` (elsewhere it
    would change nothing); and a block holds whole tiles: its size is a multiple of the
    axis' *tile* or covers the whole axis. The tile is the smallest extent a computing
    statement (not a load, store or allocation) has along the axis, the last tile of a
    ragged axis aside (1000 tiled by 128 has tiles of 128 and one of 104; its tile is
    128). A statement falls in the block its start falls in, and loads are cut at block
    boundaries, so a block of part of a tile would put boundaries inside tiles: uneven
    blocks, loads left uncut.
``buffers``
    a stream must be one the program's kernel can have (``possible_streams``): loaded
    tiles ``load.<source>``, Tensor Engine results ``psum`` and ``psum.<dtype>``, their SBUF
    copies ``evict`` (``evict.stat`` for row statistics), computed tiles ``<op>`` or
    ``<op>.stat`` after the op defining them, and ``sbuf`` for on-chip tiles no statement
    defines. Which of them a kernel has also depends on its loop order (a tile computed in
    place takes its source's buffer), so the kernel plan checks the names again.

``Program.with_schedule`` (and a program built or parsed with a schedule) refuses a
schedule that breaks one (``check_fit``); a rewrite of a scheduled program keeps what still
fits (``fitted``: a merge that widens a tile drops a block that no longer holds whole tiles).

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> program = tiled_matmul(256, 256, 512)
>>> dict(axis_tiles(program)), sorted(possible_streams(program))
({'K': 128, 'M': 128, 'N': 128}, ['evict', 'load.a', 'load.b', 'psum'])
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from nkigym_graph.ir.axes import DATA_MOVEMENT, program_axes
from nkigym_graph.ir.memo import memo
from nkigym_graph.ir.program import STATEMENTS_KEY
from nkigym_graph.ir.schedule import Schedule, ScheduleError

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

LOADED = "load."
"""Prefix of a stream of tiles loaded from one tensor (``load.a``)."""
PSUM = "psum"
"""The stream of Tensor Engine results held in fp32 (``psum.<dtype>``: in their input's dtype)."""
PSUM_DTYPE = "float32"
PSUM_ENGINES = frozenset({"tensor"})
"""Engines whose results live in PSUM."""
EVICT = "evict"
"""The stream of PSUM results copied to SBUF."""
STATISTIC = "stat"
"""The suffix of a stream of row statistics (``<op>.stat``)."""
UNDEFINED = "sbuf"
"""The stream of an on-chip tile no statement defines."""
SCHEDULED_FAMILY = "neuron"
"""The target family whose kernels a schedule describes."""


def is_statistic(shape: tuple[int, ...]) -> bool:
    """Whether a computed tile of ``shape`` is a row statistic (a ``[P, 1]`` column)."""
    return len(shape) == 2 and shape[1] == 1


def axis_tiles(program: Program) -> Mapping[str, int]:
    """The tile of every axis a computing statement touches, in name order (see the
    module docstring)."""
    return memo(program, (STATEMENTS_KEY, "axis_tiles"), _axis_tiles)


def _axis_tiles(program: Program) -> Mapping[str, int]:
    axes = program_axes(program)
    sizes = axes.sizes
    inside: dict[str, int] = {}  # extents of boxes ending before the axis does
    anywhere: dict[str, int] = {}
    for node, stmt in program.items():
        if stmt.op.name in DATA_MOVEMENT:
            continue
        for axis, (lo, hi) in axes.box(node).items():
            extent = hi - lo
            anywhere[axis] = min(anywhere.get(axis, extent), extent)
            if hi < sizes.get(axis, hi):
                inside[axis] = min(inside.get(axis, extent), extent)
    return MappingProxyType({axis: inside.get(axis, anywhere[axis]) for axis in sorted(anywhere)})


def possible_streams(program: Program) -> frozenset[str]:
    """Every stream a kernel of ``program`` can have, whatever its schedule (see the
    module docstring)."""
    return memo(program, (STATEMENTS_KEY, "possible_streams"), _possible_streams)


def _possible_streams(program: Program) -> frozenset[str]:
    variables = program.variables
    loaded = {program[n].dst.var: program[n].operands[0].var for n in program.statements_of("load")}
    dtypes = {info.dtype or PSUM_DTYPE for info in variables.values() if info.external}
    kept = {f"{PSUM}.{dtype}" for dtype in dtypes | {program.output_dtype} if dtype != PSUM_DTYPE}
    found: set[str] = set()
    for var, info in variables.items():
        if info.external:
            continue
        writers = program.writers_of(var)
        if var in loaded and len(writers) == 1:
            found.add(LOADED + loaded[var])
        elif info.defined_by is None or not writers:
            found.add(UNDEFINED)
        elif all(program[w].op.engine in PSUM_ENGINES for w in writers):
            first = program[writers[0]]
            copied = tuple(stop for _, stop in first.dst.slices)  # the eviction copies this
            found |= {PSUM, _named(EVICT, info.shape), _named(EVICT, copied)}
            if len(writers) == 1 and first.op.result_keeps_input_dtype and not first.accumulate:
                found |= kept
        else:
            found.add(_named(program[info.defined_by].op.name, info.shape))
    return frozenset(found)


def _named(stream: str, shape: tuple[int, ...]) -> str:
    return f"{stream}.{STATISTIC}" if is_statistic(shape) else stream


def require_ahead(schedule: Schedule, axis: str) -> None:
    """Refuse ``ahead=axis`` unless ``axis`` is a loop of ``schedule.order`` other than the
    innermost."""
    if axis not in schedule.order[:-1]:
        raise ScheduleError(
            f"ahead={axis}: a loop runs ahead into the next loop of the order, so {axis!r} must be "
            f"a loop of order={','.join(schedule.order) or '(none)'} other than the innermost"
        )


def check_fit(program: Program, schedule: Schedule) -> None:
    """Refuse ``schedule`` if it breaks a rule of the module docstring for ``program``
    (its axes are known to be the program's) or its target runs no NKI kernel."""
    target = program.target
    if target.family != SCHEDULED_FAMILY:
        raise ScheduleError(
            f"a schedule says how an NKI kernel runs, and target {target.name} (family {target.family}) "
            f"runs none: its backends and cost model would ignore it"
        )
    for axis in schedule.ahead:
        require_ahead(schedule, axis)
    for axis, size in schedule.blocks:
        problem = _block_problem(program, schedule, axis, size)
        if problem is not None:
            raise ScheduleError(problem)
    streams = possible_streams(program)
    unknown = [name for name, _ in schedule.buffers if name not in streams]
    if unknown:
        raise ScheduleError(
            f"schedule gives buffers for stream(s) {', '.join(map(repr, unknown))}, which no kernel of "
            f"this program has (the streams it can have: {', '.join(sorted(streams))})"
        )


def fitted(program: Program, schedule: Schedule) -> Schedule:
    """``schedule`` without the choices that break a rule for ``program`` (a rewrite of
    the statements can widen a tile or remove a stream); ``schedule`` itself when all fit."""
    if not schedule.blocks and not schedule.buffers and not schedule.ahead:
        return schedule
    streams = possible_streams(program)
    blocks = [(a, size) for a, size in schedule.blocks if _block_problem(program, schedule, a, size) is None]
    buffers = [(name, count) for name, count in schedule.buffers if name in streams]
    ahead = [axis for axis in schedule.ahead if axis in schedule.order[:-1]]
    kept = schedule.replace(blocks=blocks, buffers=buffers, ahead=ahead)
    return schedule if kept == schedule else kept


def _block_problem(program: Program, schedule: Schedule, axis: str, size: int) -> str | None:
    """Why ``blocks=axis:size`` of ``schedule`` sizes no loop or does not hold whole tiles
    (None: it fits)."""
    if axis not in schedule.order:
        return (
            f"blocks={axis}:{size}: a block size sizes a block loop, and {axis} is not a loop of "
            f"order={','.join(schedule.order) or '(none)'}"
        )
    tile = axis_tiles(program).get(axis)
    extent = program_axes(program).sizes.get(axis)
    if tile is None or extent is None or size % tile == 0 or size >= extent:
        return None
    return (
        f"blocks={axis}:{size}: axis {axis} has tiles of {tile}, so a block of it holds whole tiles "
        f"-- a multiple of {tile} ({tile}, {2 * tile}, ...) -- or the whole axis ({extent} or more)"
    )
