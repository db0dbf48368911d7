"""Rotating buffers: every on-chip tile of the kernel program gets a slot of its stream.

A *stream* is a pool of equal buffers (*slots*) that tiles of one kind rotate through:
``load.<param>`` for tiles loaded from a parameter, ``psum`` for Tensor Engine
results (fp32), ``psum.<dtype>`` for those that keep their input's dtype (a transpose of
a bf16 tile is written straight into a ``psum.bfloat16`` slot, ``psum_dtypes``),
``evict`` for their SBUF copies, and, for other computed tiles, the name of the op that
defines them (``<op>.stat`` for row statistics, ``[P, 1]`` columns such as sums, maxima
and scales, held in fp32 as the engines compute them and as the unscheduled kernel holds
them, at no cost). A tile that an elementwise op computes from a tile dying
there takes that tile's slot (in place, as ``acc = acc + partial`` does), staying in its
stream.

Walking the statements in kernel order, a tile takes a slot when first written: a slot
never used while the stream has fewer than its count, else the slot freed longest ago
(so consecutive tiles rotate through every slot: a load into a slot waits only for the
readers of the tile that slot held count tiles earlier). When every slot of a load
stream is taken, the loaded tile whose next use is farthest is dropped and loaded again
before that use (*reload*); a computed stream cannot drop a tile, so too few slots for
what must stay live is a ``ScheduleError`` naming the stream and what it needs.

A stream's count is the schedule's (``buffers``), or a default
(``nkigym_graph.scheduling.plan.buffer_counts``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from nkigym_graph.ir.dtypes import itemsize
from nkigym_graph.ir.memo import memo
from nkigym_graph.ir.program import STATEMENTS_KEY, Program
from nkigym_graph.ir.schedule import ScheduleError
from nkigym_graph.ir.schedule_fit import EVICT, LOADED, PSUM, PSUM_DTYPE, STATISTIC, UNDEFINED, is_statistic
from nkigym_graph.ir.targets import Target
from nkigym_graph.scheduling.prepare import KernelProgram, psum_variables

WORK_DTYPE = "float32"
"""The dtype of a tile whose tensor does not say (and of computed tiles in a float64
program, ``working_dtype``)."""
IN_PLACE_ENGINES = frozenset({"vector", "scalar", "gpsimd"})
STATISTIC_DTYPE = "float32"


class Slot(NamedTuple):
    """One buffer: number ``number`` of ``stream``."""

    stream: str
    number: int


class Stream(NamedTuple):
    """A pool of rotating buffers."""

    name: str
    buffer: str
    """``sbuf`` or ``psum``."""
    shape: tuple[int, ...]
    """The largest tile it holds (each slot has this shape)."""
    dtype: str
    buffers: int
    """How many slots rotate."""

    @property
    def bytes_per_partition(self) -> int:
        """Bytes per partition of one slot."""
        return math.prod(self.shape[1:]) * itemsize(self.dtype)


class Step(NamedTuple):
    """One statement of the kernel program as the kernel runs it."""

    node: int
    slots: tuple[tuple[str, Slot], ...]
    """The slot of every on-chip variable the statement mentions."""
    reload: bool = False
    """A load run again because its tile was dropped."""


class Allocation(NamedTuple):
    steps: tuple[Step, ...]
    streams: Mapping[str, Stream]
    reloads: int
    overflow: str | None
    """Why the buffers do not fit on chip (None: they fit)."""


class _Walk:
    """One pass over the ordered statements with given stream counts (none given: unlimited)."""

    def __init__(self, kernel: KernelProgram, order: Sequence[int], counts: Mapping[str, int]) -> None:
        self.kernel = kernel
        self.program = kernel.program
        self.order = order
        self.counts = counts
        program = self.program
        self.load_of: dict[str, int] = {}
        for node in program.statements_of("load"):
            var = program[node].dst.var
            if len(program.writers_of(var)) == 1:
                self.load_of[var] = node
        self.uses: dict[str, list[int]] = {}
        for position, node in enumerate(order):
            for operand in program[node].operands:
                if not program.variables[operand.var].external:
                    uses = self.uses.setdefault(operand.var, [])
                    if not uses or uses[-1] != position:
                        uses.append(position)
        self.distances = _reuse_distances(self.uses, {v: self.base_stream(v) for v in self.load_of})
        self.stream_of: dict[str, str] = {}
        self.moved: dict[str, Slot] = {}
        self.slot_of: dict[str, Slot | None] = {}
        self.occupant: dict[str, list[str | None]] = {}
        self.freed: dict[str, list[int]] = {}
        self.peak: dict[str, int] = {}
        self.members: dict[str, set[str]] = {}
        self.steps: list[Step] = []
        self.reloads = 0

    def base_stream(self, var: str) -> str:
        program, kernel = self.program, self.kernel
        if var in self.load_of:
            return LOADED + program[self.load_of[var]].operands[0].var
        if var in kernel.psum:
            return psum_stream(psum_dtypes(program)[var])
        info = program.variables[var]
        defined = info.defined_by
        if var in kernel.evictions:
            name = EVICT
        else:
            name = program[defined].op.name if defined is not None else UNDEFINED
        return f"{name}.{STATISTIC}" if name != UNDEFINED and is_statistic(info.shape) else name

    def run(self) -> None:
        program = self.program
        for position, node in enumerate(self.order):
            stmt = program[node]
            mentioned = [o.var for o in stmt.operands if not program.variables[o.var].external]
            protect = set(mentioned)
            dst = stmt.dst.var if stmt.op.write_positions else None
            defines = (
                dst is not None
                and dst not in self.slot_of
                and not program.variables[dst].external
                and program.variables[dst].defined_by == node
            )
            for var in mentioned:
                if var == dst and defines:
                    continue
                if self.slot_of.get(var) is None:
                    self._reload(var, position, protect)
            if defines and dst is not None:
                self._define(dst, stmt.op.engine, [o.var for o in stmt.reads], position, protect)
            bound = tuple(
                (var, slot)
                for var in dict.fromkeys(mentioned)
                if (slot := self.slot_of[var] or self.moved.get(var)) is not None
            )
            self.moved.clear()
            self.steps.append(Step(node, bound))
            for var in dict.fromkeys(mentioned):
                if self.uses[var][-1] == position or self._too_far(var, position):
                    self._release(var, position)

    # -- slots ------------------------------------------------------------------------------
    def _define(self, var: str, engine: str, reads: Sequence[str], position: int, protect: set[str]) -> None:
        shape = self.program.variables[var].shape
        if engine in IN_PLACE_ENGINES and var not in self.kernel.psum and reads:
            source = reads[0]
            slot = self.slot_of.get(source)
            if (
                slot is not None
                and not is_psum_stream(slot.stream)
                and not slot.stream.startswith(LOADED)
                and self.uses[source][-1] == position
                and self.program.variables[source].shape == shape
            ):
                self.slot_of[source] = None
                self.moved[source] = slot  # this statement still reads it there
                self._occupy(var, slot)
                return
        stream = self.base_stream(var)
        self._occupy(var, self._take(stream, position, protect))

    def _occupy(self, var: str, slot: Slot) -> None:
        self.slot_of[var] = slot
        self.stream_of[var] = slot.stream
        self.occupant[slot.stream][slot.number] = var
        self.members.setdefault(slot.stream, set()).add(var)
        live = sum(1 for v in self.occupant[slot.stream] if v is not None)
        self.peak[slot.stream] = max(self.peak.get(slot.stream, 0), live)

    def _take(self, stream: str, position: int, protect: set[str]) -> Slot:
        occupants = self.occupant.setdefault(stream, [])
        freed = self.freed.setdefault(stream, [])
        count = self.counts.get(stream)
        free = [i for i, v in enumerate(occupants) if v is None]
        if count is None:  # unlimited: reuse the slot freed longest ago, else a new one
            if free:
                return Slot(stream, min(free, key=lambda i: freed[i]))
        elif len(occupants) < count:
            pass  # a new slot while the stream has fewer than its count: rotate through all
        elif free:
            return Slot(stream, min(free, key=lambda i: freed[i]))
        elif stream.startswith(LOADED):
            return self._drop(stream, position, protect)
        else:
            raise ScheduleError(
                f"stream {stream!r} needs more than {count} buffers: all {count} hold tiles still live "
                f"when statement `{self.program.describe(self.order[position])}` needs one more"
            )
        occupants.append(None)
        freed.append(-1)
        return Slot(stream, len(occupants) - 1)

    def _drop(self, stream: str, position: int, protect: set[str]) -> Slot:
        """Free the slot whose loaded tile is next used farthest ahead (Belady)."""
        occupants = self.occupant[stream]
        best, best_next = -1, -1
        for index, var in enumerate(occupants):
            if var is None or var in protect:
                continue
            upcoming = next((u for u in self.uses[var] if u > position), math.inf)
            if upcoming > best_next:
                best, best_next = index, upcoming  # type: ignore[assignment]
        if best < 0:
            raise ScheduleError(
                f"stream {stream!r}: {len(occupants)} buffers cannot hold the tiles one statement reads "
                f"(`{self.program.describe(self.order[position])}`)"
            )
        victim = occupants[best]
        assert victim is not None
        self.slot_of[victim] = None
        occupants[best] = None
        return Slot(stream, best)

    def _reload(self, var: str, position: int, protect: set[str]) -> None:
        node = self.load_of.get(var)
        if node is None:
            raise ScheduleError(f"tile {var} is read before it is written in kernel order")
        slot = self._take(self.base_stream(var), position, protect)
        self._occupy(var, slot)
        self.steps.append(Step(node, ((var, slot),), reload=True))
        self.reloads += 1

    def _too_far(self, var: str, position: int) -> bool:
        """Whether a loaded tile's next use is beyond what its stream can keep: more other
        tiles of the stream are used before it than the stream has buffers (it is loaded
        again then, and its buffer serves the tiles in between now)."""
        slot = self.slot_of.get(var)
        count = self.counts.get(slot.stream) if slot is not None else None
        if slot is None or count is None or var not in self.load_of:
            return False
        return self.distances.get((var, position), 0) >= count

    def _release(self, var: str, position: int) -> None:
        slot = self.slot_of.get(var)
        if slot is None:
            return
        self.occupant[slot.stream][slot.number] = None
        self.freed[slot.stream][slot.number] = position
        self.slot_of[var] = None


def _reuse_distances(
    uses: Mapping[str, list[int]], stream_of: Mapping[str, str]
) -> dict[tuple[str, int], int]:
    """For each use ``(var, position)`` of a loaded tile that is used again: how many other
    tiles of its stream are used before the next use (the LRU stack distance, counted with
    a Fenwick tree over the stream's sequence of uses)."""
    sequences: dict[str, list[tuple[int, str]]] = {}
    for var, stream in stream_of.items():
        sequences.setdefault(stream, []).extend((position, var) for position in uses.get(var, ()))
    out: dict[tuple[str, int], int] = {}
    for sequence in sequences.values():
        sequence.sort()
        size = len(sequence)
        tree = [0] * (size + 1)

        def add(i: int, delta: int, tree: list[int] = tree, size: int = size) -> None:
            i += 1
            while i <= size:
                tree[i] += delta
                i += i & -i

        def total(i: int, tree: list[int] = tree) -> int:  # sum of marks at 0 .. i-1
            found = 0
            while i > 0:
                found += tree[i]
                i -= i & -i
            return found

        last: dict[str, tuple[int, int]] = {}  # var -> (index in sequence, position)
        for index, (position, var) in enumerate(sequence):
            before = last.get(var)
            if before is not None:
                previous_index, previous_position = before
                out[(var, previous_position)] = total(index) - total(previous_index + 1)
                add(previous_index, -1)
            add(index, 1)
            last[var] = (index, position)
    return out


class Unlimited(NamedTuple):
    """The walk with as many buffers as each stream needs: no reloads."""

    steps: tuple[Step, ...]
    streams: Mapping[str, Stream]
    peaks: Mapping[str, int]
    """Tiles of each stream live at once, at most."""


def unlimited_walk(kernel: KernelProgram, order: Sequence[int]) -> Unlimited:
    """Slots with unlimited buffers (what each stream needs to keep every tile)."""
    walk = _Walk(kernel, order, {})
    walk.run()
    streams = {
        name: _stream(kernel.program, name, walk.members.get(name, set()), peak)
        for name, peak in walk.peak.items()
    }
    return Unlimited(tuple(walk.steps), streams, dict(walk.peak))


def allocate(
    kernel: KernelProgram, order: Sequence[int], counts: Mapping[str, int], target: Target
) -> Allocation:
    """Slots for every on-chip tile of ``kernel`` run in ``order`` with ``counts`` buffers
    per stream (see the module docstring)."""
    walk = _Walk(kernel, order, counts)
    walk.run()
    streams = {
        name: _stream(kernel.program, name, walk.members.get(name, set()), n) for name, n in counts.items()
    }
    reserve = psum_scratch_bytes(kernel)
    return Allocation(tuple(walk.steps), streams, walk.reloads, overflow(streams, target, reserve))


def psum_scratch_bytes(kernel: KernelProgram) -> int:
    """PSUM (bytes per partition) outside the streams: a Tensor Engine result that keeps
    its input's dtype but is accumulated into (``+=``) or written more than once lives in
    an fp32 ``psum`` slot (``psum_written_directly``), so the kernel writes it to a scratch
    tile, one per shape and dtype, and adds or copies it in."""
    program = kernel.program
    direct, sbuf_dtype = psum_written_directly(program), _sbuf_dtypes(program)
    scratch: set[tuple[tuple[int, ...], str]] = set()
    for stmt in program.statements:
        var = stmt.dst.var
        if stmt.op.result_keeps_input_dtype and var in kernel.psum and var not in direct:
            dtype = sbuf_dtype(stmt.operands[stmt.op.read_positions[0]].var)
            scratch.add((tuple(hi - lo for lo, hi in stmt.dst.slices), dtype))
    target = program.target
    return sum(psum_footprint(math.prod(shape[1:]) * itemsize(dtype), target) for shape, dtype in scratch)


def psum_footprint(bytes_per_partition: int, target: Target) -> int:
    """Bytes per partition a PSUM tile of ``bytes_per_partition`` takes: whole banks (an
    accumulation group lives in one bank; the profile refuses more live banks than PSUM has)."""
    bank = int(target.facts.get("psum_bank_bytes", 0))
    return -(-bytes_per_partition // bank) * bank if bank else bytes_per_partition


def slot_footprint(stream: Stream, target: Target) -> int:
    """Bytes per partition one slot of ``stream`` takes on chip (PSUM: whole banks)."""
    size = stream.bytes_per_partition
    return psum_footprint(size, target) if stream.buffer == "psum" else size


def psum_dtypes(program: Program) -> Mapping[str, str]:
    """The dtype of every PSUM variable's tile: fp32 (a matmul accumulates in fp32), or,
    for a result that keeps its input's dtype and is written once (a transpose), its
    input's dtype as the kernel holds it (a loaded tile its parameter's, a computed one
    the working dtype).

    >>> from nkigym_graph import tile, nc_transpose
    >>> program = tile(nc_transpose, {"x": (128, 128)}, dtype="bf16")
    >>> sorted(set(psum_dtypes(program).values()))
    ['bfloat16']
    """
    return memo(program, (STATEMENTS_KEY, "psum_dtypes"), _psum_dtypes)


def _psum_dtypes(program: Program) -> Mapping[str, str]:
    sbuf_dtype, direct = _sbuf_dtypes(program), psum_written_directly(program)
    found = {}
    for var in psum_variables(program):
        stmt = program[program.writers_of(var)[0]]
        found[var] = sbuf_dtype(stmt.operands[stmt.op.read_positions[0]].var) if var in direct else PSUM_DTYPE
    return found


def psum_written_directly(program: Program) -> frozenset[str]:
    """PSUM variables written once, not accumulated, by a Tensor Engine result that keeps
    its input's dtype (a transpose): their tile has that dtype and the kernel writes it
    directly. Such a result anywhere else goes through a scratch tile (``psum_scratch_bytes``)."""
    return memo(program, (STATEMENTS_KEY, "psum_written_directly"), _psum_written_directly)


def _psum_written_directly(program: Program) -> frozenset[str]:
    found = set()
    for var in psum_variables(program):
        writers = program.writers_of(var)
        stmt = program[writers[0]]
        if len(writers) == 1 and stmt.op.result_keeps_input_dtype and not stmt.accumulate:
            found.add(var)
    return frozenset(found)


def tile_dtypes(program: Program) -> Callable[[str], str]:
    """The dtype the kernel holds each variable of ``program`` in, as its stream does: an
    HBM tensor its own, a loaded tile its parameter's, a PSUM tile its stream's
    (``psum_dtypes``), another computed tile the working dtype."""
    psum, sbuf_dtype = psum_dtypes(program), _sbuf_dtypes(program)
    return lambda var: psum.get(var) or sbuf_dtype(var)


def _sbuf_dtypes(program: Program) -> Callable[[str], str]:
    """``tile_dtypes`` for the variables outside PSUM."""
    variables, working = program.variables, working_dtype(program)
    loaded = {program[n].dst.var: program[n].operands[0].var for n in program.statements_of("load")}

    def dtype_of(var: str) -> str:
        source = var if variables[var].external else loaded.get(var)
        if source is None:
            return STATISTIC_DTYPE if is_statistic(variables[var].shape) else working
        return variables[source].dtype or WORK_DTYPE

    return dtype_of


def psum_stream(dtype: str) -> str:
    """The stream of PSUM tiles of ``dtype``: ``psum`` (fp32) or ``psum.<dtype>``."""
    return PSUM if dtype == PSUM_DTYPE else f"{PSUM}.{dtype}"


def is_psum_stream(name: str) -> bool:
    """Whether stream ``name`` holds PSUM tiles."""
    return name == PSUM or name.startswith(f"{PSUM}.")


def _stream(program: Program, name: str, members: set[str], count: int) -> Stream:
    shapes = [program.variables[var].shape for var in members]
    shape = tuple(max(dims) for dims in zip(*shapes, strict=True)) if shapes else (1, 1)
    if is_psum_stream(name):
        buffer, dtype = "psum", PSUM_DTYPE if name == PSUM else name.removeprefix(f"{PSUM}.")
    elif name.startswith(LOADED):
        buffer, dtype = "sbuf", program.variables[name.removeprefix(LOADED)].dtype or WORK_DTYPE
    elif name.endswith(f".{STATISTIC}"):
        buffer, dtype = "sbuf", STATISTIC_DTYPE
    else:
        buffer, dtype = "sbuf", working_dtype(program)
    return Stream(name, buffer, shape, dtype, count)


def working_dtype(program: Program) -> str:
    """The dtype of computed SBUF tiles: the program's output dtype, as the NKI backend
    keeps them (float32 for a float64 program: the hardware has no float64), so a bf16
    chain feeds its second matmul bf16 tiles."""
    dtype = program.output_dtype
    return WORK_DTYPE if dtype == "float64" else dtype


def overflow(streams: Mapping[str, Stream], target: Target, psum_reserve: int = 0) -> str | None:
    """Why ``streams`` do not fit ``target``'s SBUF and PSUM with ``psum_reserve`` bytes
    per partition of PSUM kept for scratch tiles (None: they fit)."""
    for buffer, capacity in (
        ("sbuf", target.sbuf_bytes_per_partition),
        ("psum", target.psum_bytes_per_partition - psum_reserve),
    ):
        chosen = [s for s in streams.values() if s.buffer == buffer]
        used = sum(s.buffers * slot_footprint(s, target) for s in chosen)
        if used > capacity:
            parts = ", ".join(
                f"{s.name} {s.buffers} x {slot_footprint(s, target)} B"
                for s in sorted(chosen, key=lambda s: s.name)
            )
            where = f"{used} bytes per partition > {capacity}"
            return f"{buffer.upper()} overflows on {target.name}: {where} ({parts})"
    bank = int(target.facts.get("psum_bank_bytes", 0))
    for stream in streams.values():
        if stream.buffer == "psum" and bank and stream.bytes_per_partition > bank:
            return (
                f"a PSUM tile of {stream.bytes_per_partition} bytes per partition exceeds one "
                f"{bank}-byte bank on {target.name}"
            )
    return None
