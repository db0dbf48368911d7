"""The lowering context: buffers of program variables, PSUM eviction, instruction groups.

Every program variable gets one buffer. Parameters and outputs are HBM tensors; an
on-chip variable is a PSUM tile when all its writers accumulate natively in PSUM
(``nc_matmul``) and it fits one PSUM bank, otherwise an SBUF tile.

A PSUM tile is copied to SBUF (``nisa.tensor_copy``, the eviction) before an
instruction that cannot read PSUM uses it (a DMA, a Tensor Engine input). The copy
stays valid until the next write of the variable. Vector and Scalar Engine
instructions read PSUM directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.ir.targets import Target
from nkigym_graph.ir.variables import INTERMEDIATE
from nkigym_graph.nki_sim.timing.constants import timing_constants

from .engines import CHOICES, FIXED_ENGINE, TENSOR, EngineLoads, reachable
from .errors import NkiEmitError
from .fusion import Fusions
from .ir import Affine, Alloc, Arg, Assign, Call, Group, Hbm, Instr, Pool, Ref, Tile, const_slices, whole
from .names import NKI_ITEMSIZE, NameTable, identifier

PSUM_DTYPE = "nl.float32"
"""Matmul results accumulate in fp32 PSUM (NeuronCore-v2/v3)."""
PSUM_ITEMSIZE = 4
WRITTEN = ("dst", "reduce_res")
"""Arguments an instruction writes."""
SCRATCH_DTYPE = "nl.float32"
"""Partial results of ``+=`` statements on the Vector/Scalar Engines (which compute in fp32)."""
STATISTIC_DTYPE = "nl.float32"
"""Computed ``[P, 1]`` tiles (row sums, maxima, scales): fp32 whatever the kernel's dtype."""


class Lowering(Protocol):
    """How one op becomes NKI instructions (see ``nki_backend.lowering``)."""

    op_name: str
    psum_native: bool
    sinks: bool
    sbuf_operands: frozenset[int]

    def lower(self, node: int, stmt: Statement, kb: KernelBuilder) -> None: ...


@dataclass(frozen=True)
class KernelTypes:
    """The dtypes of the kernel: ``working`` for computed SBUF tiles (the output dtype)."""

    working: str
    outputs: Mapping[str, str]
    params: Mapping[str, str]
    """Parameter dtypes by kernel parameter name."""

    @property
    def working_code(self) -> str:
        return f"nl.{self.working}"


class KernelBuilder:
    """Collects the instruction groups of one kernel while the lowerings call it."""

    def __init__(
        self,
        program: Program,
        target: Target,
        types: KernelTypes,
        lowerings: Mapping[str, Lowering],
        engine_policy: str = "fixed",
    ) -> None:
        self.program = program
        self.target = target
        self.types = types
        self.lowerings = lowerings
        self.names = NameTable()
        self.hbm: dict[str, Hbm] = {}
        self.params: list[str] = []
        for param in program.params:
            name = self.names.reserve(identifier(param.name))
            self.hbm[param.name] = Hbm(name, tuple(param.shape))
            self.params.append(name)
        self.tiles: dict[str, Tile] = {}
        self.slots: dict[str, tuple[Pool, int]] = {}
        """Planned kernels: the rotating buffer each variable lives in now (see ``.planned``)."""
        self.planned = False
        self.psum_written_directly: frozenset[str] = frozenset()
        """Planned kernels: PSUM variables whose slots hold their input's dtype (a transpose
        written once, ``scheduling.allocate.psum_written_directly``): written directly."""
        self.copies: dict[str, tuple[Tile, tuple[tuple[int, int], ...] | None]] = {}
        """PSUM variables copied to SBUF: the copy and the region it holds (None: all)."""
        self.views: dict[str, tuple[Tile, int]] = {}
        """Variables held in columns of a shared tile (a group of transposes, :mod:`.fusion`):
        the tile and the first column."""
        self.added_by_store: set[str] = set()
        """Variables whose store adds into its output region (a row stored there first,
        :class:`.lowering.TensorRowLowering`): ``dst_rmw_op=nl.add``."""
        self.spread: dict[tuple[object, ...], Tile] = {}
        """Rows spread over the partitions (:mod:`.spread`), by (variable, slices, partitions)."""
        self.constants: dict[tuple[object, ...], Tile] = {}
        """Constant tiles (ones), made once."""
        self.fusions = Fusions()
        """Statements done inside another's instruction (:mod:`.fusion`)."""
        self.engines = EngineLoads(timing_constants(target), engine_policy)
        """Time given to each compute engine so far (:mod:`.engines`)."""
        self.psum_vars = self._psum_variables()
        self.groups: list[Group] = []
        self._open: tuple[str, str, int | None] | None = None
        self._instrs: list[Instr] = []

    # -- planning ---------------------------------------------------------------------
    def _psum_variables(self) -> frozenset[str]:
        bank = int(self.target.facts.get("psum_bank_bytes", 2048))
        found = set()
        for var, info in self.program.variables.items():
            if info.kind != INTERMEDIATE or len(info.shape) != 2:
                continue
            writers = self.program.writers_of(var)
            if all(self.lowering(w).psum_native for w in writers) and info.shape[1] * PSUM_ITEMSIZE <= bank:
                found.add(var)
        return frozenset(found)

    def lowering(self, node: int) -> Lowering:
        """The lowering of statement ``node``; an error naming the op when there is none."""
        stmt = self.program[node]
        found = self.lowerings.get(stmt.op.name)
        if found is None:
            raise NkiEmitError(
                f"no NKI lowering for op {stmt.op.name!r} (lowered ops: {', '.join(sorted(self.lowerings))})",
                self.program.describe(node),
            )
        return found

    def needs_eviction(self, var: str) -> bool:
        """Whether some reader of PSUM variable ``var`` must read it from SBUF."""
        return any(
            position in self.lowering(node).sbuf_operands for node, position in self.program.consumers_of(var)
        )

    # -- groups -----------------------------------------------------------------------
    def open(self, kind: str, comment: str, node: int | None = None) -> None:
        """Start the group of instructions implementing ``comment``."""
        if self._open is not None:
            raise AssertionError("a group is already open")
        self._open = (kind, comment, node)
        self._instrs = []

    def close(self) -> None:
        """Finish the open group (empty groups are dropped)."""
        assert self._open is not None
        kind, comment, node = self._open
        if self._instrs:
            self.groups.append(Group(kind, comment, tuple(self._instrs), node))
        self._open = None

    def call(self, fn: str, *args: tuple[str, Arg]) -> None:
        """Emit ``fn(key=arg, ...)``; an instruction several engines can run goes to the
        one where it finishes first (:mod:`.engines`)."""
        self._instrs.append(Call(fn, time_call(self.engines, fn, args, choose=True)))

    def assign(self, name: str, code: str) -> None:
        """Emit ``name = code``."""
        self._instrs.append(Assign(name, code))

    def describe(self, node: int) -> str:
        return statement_text(self.program, node)

    # -- buffers ----------------------------------------------------------------------
    def new_tile(self, stem: str, shape: tuple[int, ...], dtype: str, buffer: str) -> Tile:
        """Allocate a fresh tile in the open group."""
        tile = Tile(
            self.names.fresh(identifier(stem)), tuple(shape), dtype, buffer, _itemsize(dtype, self.types)
        )
        self._instrs.append(Alloc(tile))
        return tile

    def allocate(self, var: str) -> Tile:
        """The tile of on-chip variable ``var``, allocated now if it has none yet."""
        tile = self.tiles.get(var)
        if tile is None:
            info = self.program.variables[var]
            if var in self.psum_vars:
                dtype, buffer = PSUM_DTYPE, "psum"
            else:
                dtype, buffer = self._sbuf_dtype(var), "sbuf"
            tile = self.tiles[var] = self.new_tile(var, info.shape, dtype, buffer)
        return tile

    def _sbuf_dtype(self, var: str) -> str:
        """Loaded tiles keep their parameter's dtype (``a.dtype``); computed ones the working
        dtype, except row statistics (``[P, 1]`` tiles: sums, maxima, scales), kept in fp32
        like the engines compute them, at no cost."""
        sources = set()
        if self.program.variables[var].shape[1:] == (1,) and not self._loaded(var):
            return STATISTIC_DTYPE
        for node in self.program.writers_of(var):
            stmt = self.program[node]
            source = stmt.operands[stmt.op.read_positions[0]].var if stmt.op.read_positions else None
            if not self.lowering(node).sinks or source not in self.hbm:
                return self.types.working_code
            sources.add(source)
        names = {self.hbm[source].name for source in sources}
        if len(names) == 1 and next(iter(names)) in self.types.params:
            return f"{names.pop()}.dtype"
        return self.types.working_code

    def _loaded(self, var: str) -> bool:
        return all(self.lowering(node).sinks for node in self.program.writers_of(var))

    def in_psum(self, var: str) -> bool:
        return var in self.psum_vars

    @staticmethod
    def is_psum(ref: Ref) -> bool:
        return isinstance(ref.base, Tile | Pool) and ref.base.buffer == "psum"

    @staticmethod
    def dtype_of(ref: Ref) -> str:
        """Code text of an on-chip region's dtype."""
        assert isinstance(ref.base, Tile | Pool)
        return ref.base.dtype

    def slot_ref(self, operand: Operand) -> Ref:
        """The region of ``operand`` in the rotating buffer its variable occupies."""
        pool, index = self.slots[operand.var]
        return Ref(pool, const_slices(operand.slices), Affine(index))

    def view_ref(self, operand: Operand) -> Ref:
        """The region of ``operand`` in the columns of the tile its variable shares."""
        tile, column = self.views[operand.var]
        (p0, p1), (c0, c1) = operand.slices
        return Ref(tile, const_slices(((p0, p1), (c0 + column, c1 + column))))

    def sbuf_itemsize(self, var: str) -> int:
        """Bytes per element of ``var``'s SBUF tile (a PSUM variable's: of its SBUF copy)."""
        if var in self.psum_vars:
            return _itemsize(self.types.working_code, self.types)
        return _itemsize(self._sbuf_dtype(var), self.types)

    def declare_output(self, var: str, shape: tuple[int, ...]) -> Hbm:
        """Name the HBM output ``var``."""
        tensor = self.hbm[var] = Hbm(self.names.fresh(identifier(var)), shape)
        return tensor

    def hbm_ref(self, operand: Operand, statement: str) -> Ref:
        """A region of an HBM tensor (an error if ``operand`` is on chip)."""
        tensor = self.hbm.get(operand.var)
        if tensor is None:
            raise NkiEmitError(f"{operand.var!r} must be an HBM tensor here", statement)
        return Ref(tensor, const_slices(operand.slices))

    def write(self, operand: Operand) -> Ref:
        """The region a statement writes (allocating the variable's tile on its first write)."""
        if operand.var in self.views:
            return self.view_ref(operand)
        if operand.var in self.hbm:
            return Ref(self.hbm[operand.var], const_slices(operand.slices))
        if operand.var in self.slots:
            return self.slot_ref(operand)
        self.copies.pop(operand.var, None)
        for key in [k for k in self.spread if k[0] == operand.var]:
            del self.spread[key]
        return Ref(self.allocate(operand.var), const_slices(operand.slices))

    def read(self, operand: Operand, statement: str, sbuf: bool = False) -> Ref:
        """The current value of an on-chip region; ``sbuf`` forces an SBUF copy of PSUM."""
        var = operand.var
        if var in self.hbm:
            raise NkiEmitError(f"reads HBM tensor {var!r} directly; load it into SBUF first", statement)
        if var in self.slots:
            if sbuf and var in self.psum_vars:
                raise NkiEmitError(
                    f"reads PSUM tile {var!r} where SBUF is needed (the plan evicts it)", statement
                )
            return self.slot_ref(operand)
        if var in self.views:
            return self.view_ref(operand)
        if var not in self.tiles:
            raise NkiEmitError(f"reads {var!r} before any statement writes it", statement)
        if var in self.psum_vars:
            copy = self._copy_holding(var, operand.slices)
            if copy is None and sbuf:
                copy = self.evict(var, operand.slices)
            if copy is not None:
                return Ref(copy, const_slices(operand.slices))
        return Ref(self.tiles[var], const_slices(operand.slices))

    def _copy_holding(self, var: str, region: tuple[tuple[int, int], ...]) -> Tile | None:
        """The SBUF copy of PSUM variable ``var`` if it holds ``region``."""
        found = self.copies.get(var)
        if found is None:
            return None
        copy, held = found
        inside = held is None or all(
            start <= lo and hi <= stop for (start, stop), (lo, hi) in zip(held, region, strict=True)
        )
        return copy if inside else None

    def evict(self, var: str, region: tuple[tuple[int, int], ...] | None = None) -> Tile:
        """Copy PSUM variable ``var`` (only ``region`` of it, when given) to a new SBUF tile
        of its shape (in the open group). A reader of one region of an accumulator still
        being written elsewhere copies that region only: a copy of the whole tile copied
        the unfinished part too, and the next matmul into it waited for that copy."""
        source = self.tiles[var]
        copy = self.new_tile(f"{var}_sb", source.shape, self.types.working_code, "sbuf")
        slices = whole(source.shape) if region is None else const_slices(region)
        self.call("nisa.tensor_copy", ("dst", Ref(copy, slices)), ("src", Ref(source, slices)))
        self.copies[var] = (copy, region)
        return copy

    def constant_tile(
        self, key: tuple[object, ...], name: str, shape: tuple[int, ...], dtype: str, buffer: str
    ) -> Tile:
        """A tile made once per kernel for ``key`` (a scratch every use overwrites)."""
        tile = self.constants.get(key)
        if tile is None:
            tile = self.constants[key] = self.new_tile(name, shape, dtype, buffer)
        return tile

    def ones_row(self, dtype: str, partitions: int) -> Tile:
        """A ``[1, partitions]`` tile of ones of ``dtype`` (made once)."""
        key = ("ones", dtype, partitions)
        tile = self.constants.get(key)
        if tile is None:
            tile = self.constants[key] = self.new_tile("ones", (1, partitions), dtype, "sbuf")
            self.call("nisa.memset", ("dst", Ref(tile, whole(tile.shape))), ("value", "1.0"))
        return tile

    # -- results ----------------------------------------------------------------------
    def destination(self, stmt: Statement) -> tuple[Ref, Callable[[], None]]:
        """Where an instruction writes ``stmt``'s result, and what to emit after it: for
        ``+=`` a partial result goes to a scratch tile that is then added in."""
        target = self.write(stmt.dst)
        if not stmt.accumulate:
            return target, _nothing
        shape = tuple(stop - start for start, stop in stmt.dst.slices)
        part = self.new_tile(f"{stmt.dst.var}_part", shape, SCRATCH_DTYPE, "sbuf")
        part_ref = Ref(part, whole(shape))

        def add_in() -> None:
            self.call(
                "nisa.tensor_tensor",
                ("dst", target),
                ("data1", target),
                ("data2", part_ref),
                ("op", "nl.add"),
            )

        return part_ref, add_in

    def store_result(self, stmt: Statement, result: Ref) -> None:
        """Move ``result`` (a scratch PSUM tile) into ``stmt``'s destination: copy, or add for ``+=``."""
        target = self.write(stmt.dst)
        if stmt.accumulate:
            self.call(
                "nisa.tensor_tensor", ("dst", target), ("data1", target), ("data2", result), ("op", "nl.add")
            )
        else:
            self.call("nisa.tensor_copy", ("dst", target), ("src", result))


def read_buffers(args: tuple[tuple[str, Arg], ...], dst: Ref) -> list[int]:
    """The buffers (``id`` of their bases) an instruction with ``args`` reads: its operands
    that it does not write, and ``dst`` too when it adds into it (``dst_rmw_op``)."""
    reads = [id(arg.base) for key, arg in args if isinstance(arg, Ref) and key not in WRITTEN]
    if any(key == "dst_rmw_op" for key, _ in args):
        reads.append(id(dst.base))
    return reads


def time_call(
    engines: EngineLoads, fn: str, args: tuple[tuple[str, Arg], ...], choose: bool = False
) -> tuple[tuple[str, Arg], ...]:
    """Queue instruction ``fn(**args)`` on ``engines`` (a DMA on its ring); returns its
    arguments. With ``choose``, an instruction several engines can run goes to the one the
    policy prefers (an ``engine`` argument added when it is not the default); otherwise it
    runs where its ``engine`` argument (or its default engine) says."""
    refs = [arg for key, arg in args if isinstance(arg, Ref) and key not in WRITTEN]
    dst = next((arg for key, arg in args if key == "dst" and isinstance(arg, Ref)), None)
    also = [arg.base for key, arg in args if key in WRITTEN and key != "dst" and isinstance(arg, Ref)]
    if dst is None:
        return args
    reads = read_buffers(args, dst)
    if fn == "nisa.dma_copy" and refs:
        load = isinstance(dst.base, Tile | Pool)
        side = dst if load else refs[0]
        assert isinstance(side.base, Tile | Pool)
        hbm = refs[0] if load else dst
        per_partition = elements_of(side) * side.base.itemsize
        run = hbm_run_bytes(hbm, side.base.itemsize)
        engines.transfer(load, _partitions(side), per_partition, run, reads, id(dst.base))
    elif fn in CHOICES or fn in FIXED_ENGINE:
        moving = next((arg for key, arg in args if key == "moving" and isinstance(arg, Ref)), None)
        elements = max(elements_of(ref) for ref in (dst, *refs))
        if moving is not None:
            elements = elements_of(moving)
        inputs = max(1, sum(1 for ref in refs if elements_of(ref) > 1))
        psum = any(_in_psum(r) for r in (dst, *refs))
        options = reachable(CHOICES.get(fn, ()), psum)
        given = next((arg for key, arg in args if key == "engine"), None)
        if options and choose:
            engine = engines.choose(options, elements, inputs, reads, id(dst.base), psum)
            if engine != options[0]:
                args = (*args, ("engine", f"nisa.engine.{engine}"))
        elif options:
            engine = str(given).removeprefix("nisa.engine.") if given is not None else options[0]
            engines.run(engine, elements, inputs, reads, id(dst.base), only=False)
        else:
            dtype = _pe_dtype(refs[0]) if FIXED_ENGINE[fn] == TENSOR and refs else "bfloat16"
            engines.run(FIXED_ENGINE[fn], elements, inputs, reads, id(dst.base), dtype=dtype)
        for base in also:  # a second result (an activation's row sum) lands with the first
            engines.same_as(id(base), id(dst.base))
    return args


def _nothing() -> None:
    return None


def elements_of(ref: Ref) -> int:
    """Elements per partition of a region."""
    return math.prod(stop.const - start.const for start, stop in ref.slices[1:]) if len(ref.slices) > 1 else 1


def hbm_run_bytes(ref: Ref, itemsize: int) -> int:
    """Bytes of each contiguous run of a region of an HBM tensor, within one partition
    row (one DMA descriptor element): ``x[0:128, 0:1024]`` of an ``x`` [1024, 4096] of
    fp32 runs 4 KiB, ``x[0:128, 0:4096]`` 16 KiB (the whole row)."""
    shape = ref.base.shape
    run = itemsize
    for (start, stop), size in zip(reversed(ref.slices[1:]), reversed(shape[1:]), strict=True):
        run *= stop.const - start.const
        if stop.const - start.const != size:
            break
    return run


PE_DTYPES = {4: "float32", 2: "bfloat16", 1: "float8_e4m3"}
"""The Tensor Engine's rate class by input item size (fp16 streams at the bf16 rate)."""


def _pe_dtype(ref: Ref) -> str:
    """The input dtype a Tensor Engine instruction streams at (its stationary operand's,
    as the timing model takes it)."""
    itemsize = ref.base.itemsize if isinstance(ref.base, Tile | Pool) else 2
    return PE_DTYPES.get(itemsize, "bfloat16")


def _partitions(ref: Ref) -> int:
    start, stop = ref.slices[0]
    return stop.const - start.const


def _in_psum(ref: Ref) -> bool:
    return isinstance(ref.base, Tile | Pool) and ref.base.buffer == "psum"


def _itemsize(dtype: str, types: KernelTypes) -> int:
    if dtype.startswith("nl."):
        return NKI_ITEMSIZE[dtype[3:]]
    param = dtype.removesuffix(".dtype")
    return NKI_ITEMSIZE[types.params[param]]


_TEXTS = ("nki_backend", "statement_text")


def statement_text(program: Program, node: int) -> str:
    """``program.describe(node)`` (the statement's text, the comment above its code),
    remembered in the program's memo: the emitter lowers one program several times and
    several lowerings quote the same statement."""
    texts: dict[int, str] = program.memo.setdefault(_TEXTS, {})
    text = texts.get(node)
    if text is None:
        text = texts[node] = program.describe(node)
    return text
