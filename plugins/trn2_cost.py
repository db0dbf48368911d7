"""``trn2``: an analytic cost model of one Trainium2 NeuronCore-v3 (numbers from
``/work/shared/REFERENCE.md`` via ``TRN2.facts``). Modeled, not measured.

Per statement (the tables below, keyed by op name or engine):

- **DMA** (``load``, ``store``), priced as the NKI backend emits them (``nisa.dma_copy``,
  hardware DGE) and as the profile times them (``nki_sim.timing``, whose constants
  table it shares): the core's 16 DMA queues move a transfer's partition rows in
  parallel (a queue's rows one after another, each at 23 B/ns plus a per-row descriptor
  overhead, the size cliff), one transfer at a time; the fixed ~0.6 us of a transfer is
  latency after its inputs are ready (a task of no engine inserted before it), not
  queue occupancy, so transfers in flight overlap their fixed costs.
- **Tensor Engine** (``nc_matmul``): a fixed issue cost (the part of LoadStationary
  not hidden) plus MultiplyMoving (max(N, 64) cycles) at 2.4 GHz, the moving columns 4x
  slower for fp32 inputs; ``nc_transpose`` is a matmul against an identity (2x slower
  for fp32 in transpose mode).
- **Vector / Scalar Engines**: ~N cycles per input operand (N = elements per
  partition; a ``[P, 1]`` operand is held, not streamed) plus ~100 fixed cycles, at
  0.96 / 1.2 GHz.
- A PSUM tile read by the DMA or the Tensor Engine is first evicted to SBUF by a
  Vector Engine copy (one per read).

Engines overlap: statements are list-scheduled in program order onto per-engine
queues, respecting the DAG (``nkigym_graph.cost.schedule``); the modeled time is the
critical path. Feasibility: the peak live SBUF and PSUM bytes per partition over the
statement order (a tile lives from its definition to its last use; matmul and
transpose results live in PSUM) must fit the target's capacities.

Search prices thousands of programs that share most statements: a statement's price is
kept by node key (``PriceTable``), so a new state prices only its new statements, and
the rest of an estimate is a few passes over columns (rows gathered with numpy, one
scheduling loop, one liveness sweep).

Most of those programs are derived from one just priced (``Program.derivation``); the
model keeps each estimated program's run (prices, tile lifetimes, evictions and a
resumable schedule trace) while the program lives, and estimates a child from its
parent's: the statements before the first one the edit changed keep the parent's finish
times and engine queues, so the schedule resumes at the checkpoint before it; the
statements the derivation did not mark dirty keep their prices and evictions (shifted);
only the touched tiles' lifetimes are recomputed. The schedule repeats the float
additions of a full estimate in the same order, so the report is the same, bit for bit.
"""

from __future__ import annotations

import math
import operator
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence, Set
from itertools import chain, compress, islice, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from nkigym_graph import hookimpl
from nkigym_graph.cost import (
    CostModelError,
    CostReport,
    Schedule,
    Task,
    dtype_of,
    itemsize,
)
from nkigym_graph.cost.liveness import peak_live_by
from nkigym_graph.cost.schedule import Edges, Trace, traced_schedule
from nkigym_graph.nki_sim.timing.constants import timing_constants
from nkigym_graph.plugin_manager import registered_cost_models, registered_targets
from nkigym_graph.program import Program
from nkigym_graph.slices import Slices, volume
from nkigym_graph.statement import Statement
from nkigym_graph.targets import BUILTIN_TARGETS
from nkigym_graph.variables import INTERMEDIATE, PARAM

if TYPE_CHECKING:
    from nkigym_graph.derivation import Derivation

RESULT_DTYPE = {"nc_matmul": "float32"}
"""Ops whose result dtype is fixed: a matmul accumulates fp32 in PSUM. A transpose keeps its
input's dtype (NKI's ``nc_transpose`` writes PSUM in the input dtype), so a matmul reading
a transposed bf16 tile runs at the bf16 rate."""
BUFFER_OF_ENGINE = {"tensor": "psum"}
"""Where an engine's results live (default: SBUF)."""
READS_SBUF_ONLY = frozenset({"dma", "tensor"})
STORE_QUEUE = "dma_out"
"""Stores run on the DMA queues' outbound rings (to HBM), a queue of their own: a store
waiting for its result does not hold up the loads behind it (as in the profile)."""
DMA_QUEUES = ("dma", STORE_QUEUE)
"""Engines that cannot read PSUM: a PSUM operand is evicted to SBUF first."""
MATMUL_SLOWDOWN = {"float32": 4.0, "float64": 4.0}
"""MultiplyMoving slowdown against bf16/fp16 inputs."""
TRANSPOSE_SLOWDOWN = {"float32": 2.0, "float64": 2.0}
"""Transpose mode is twice as fast as a plain fp32 matmul."""
PEAK_FACT = {"float32": "peak_flops_fp32", "float64": "peak_flops_fp32"}
"""Target fact holding the Tensor Engine peak for an input dtype (default: bf16)."""
ENGINE_CLOCK = {"tensor": "tensor_engine_hz", "vector": "vector_engine_hz", "scalar": "scalar_engine_hz"}
LOAD_STATIONARY_COLUMNS_PER_CYCLE = 4
"""Fast LoadStationary loads four stationary columns per cycle."""

REQUIRED_FACTS = (
    "tensor_engine_hz",
    "vector_engine_hz",
    "scalar_engine_hz",
    "peak_flops_bf16",
    "peak_flops_fp32",
    "dma_engines",
    "dma_bytes_per_ns_per_engine",
    "dma_dge_fixed_seconds",
    "dma_saturating_bytes_per_partition",
    "dma_overhead_bound_bytes_per_partition",
    "vector_fixed_cycles",
    "matmul_min_moving_cycles",
)


class Work(NamedTuple):
    """What one statement costs on its engine."""

    seconds: float
    flops: int = 0
    bytes: int = 0
    """Bytes moved between HBM and on-chip memory."""
    peak_dtype: str | None = None
    """Input dtype, for Tensor Engine matmuls: it sets the peak FLOP/s of the MFU."""


def _facts(program: Program) -> Mapping[str, Any]:
    target = program.target
    if target.family != "neuron":
        known = {**BUILTIN_TARGETS, **registered_targets()}
        priced = ", ".join(sorted(n for n, t in known.items() if t.family == "neuron"))
        raise CostModelError(
            f"the trn2 cost model prices Trainium targets ({priced}); target {target.name!r} is a "
            f"{target.family} target, which no cost model prices yet (registered cost models: "
            f"{', '.join(sorted(registered_cost_models()))}). Search and estimate need a Trainium "
            f"target; emit_artifact(program, backend='buda', arch={target.name!r}) emits a netlist"
        )
    facts = target.facts
    missing = [f for f in REQUIRED_FACTS if f not in facts]
    if missing:
        raise CostModelError(
            f"the trn2 cost model needs target facts {missing}; target {program.target.name!r} lacks them"
        )
    return facts


class Pricing:
    """The facts and tile dtypes of one program, for pricing its statements."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.facts = _facts(program)
        self.dtypes: dict[str, str] = {}
        self.bandwidth = bandwidth(self.facts)
        self.timing = timing_constants("trn2")

    def dtype(self, var: str) -> str:
        """The dtype of ``var`` (found on demand: most statements are priced from the cache)."""
        found = self.dtypes.get(var)
        return found if found is not None else dtype_of(self.program, var, RESULT_DTYPE, self.dtypes)

    def kind(self, var: str) -> str | None:
        """``param``, ``output`` or ``intermediate`` (None: not a variable of the program)."""
        info = self.program.variables.get(var)
        return None if info is None else info.kind

    def shape(self, stmt: Statement) -> Hashable:
        """All a price depends on besides the target: the op, attributes, slices, and the
        dtype and kind of each operand."""
        op = stmt.op
        known, variables = self.dtypes, self.program.variables
        operands = []
        for var, slices in stmt.operands:  # ``dtype`` and ``kind``, inlined (the pricing hot path)
            info = variables.get(var)
            operands.append((slices, known.get(var) or self.dtype(var), None if info is None else info.kind))
        return (op.name, op.engine, stmt.attrs, stmt.accumulate, tuple(operands))

    def dma_seconds(self, data: Slices, dtype: str) -> float:
        """Seconds the DMA queues spend moving the tile ``data`` (the fixed latency aside;
        see the module docstring): each queue moves its share of the partition rows, a
        row (one contiguous run in HBM) at the queue's bandwidth plus its overhead."""
        partitions = data[0][1] - data[0][0]
        per_partition = volume(data) * itemsize(dtype) / partitions
        queues = self.facts["dma_engines"]
        row = (
            per_partition / (self.facts["dma_bytes_per_ns_per_engine"] * 1e9)
            + self.timing.dma_chunk_overhead_ns * 1e-9
        )
        return math.ceil(partitions / queues) * row


def bandwidth(facts: Mapping[str, Any]) -> float:
    """The core's DMA bandwidth in bytes per second."""
    return float(facts["dma_engines"] * facts["dma_bytes_per_ns_per_engine"] * 1e9)


def peak_flops(facts: Mapping[str, Any], dtype: str) -> float:
    """Tensor Engine peak FLOP/s for matmul inputs of ``dtype``: the timing model's table
    (128 x 128 x 2 FLOP x 2.4 GHz for bf16, a quarter for fp32), so that both yardsticks
    divide by the same peak; the target's rounded ``peak_flops_*`` facts otherwise."""
    name = "float32" if PEAK_FACT.get(dtype) == "peak_flops_fp32" else dtype
    if facts.get("core") == "NeuronCore-v3":
        return timing_constants("trn2").peak_tflops(name) * 1e12
    return float(facts[PEAK_FACT.get(dtype, "peak_flops_bf16")])


def _free(slices: Slices) -> int:
    """Elements per partition of a tile region."""
    return volume(slices) // max(1, slices[0][1] - slices[0][0])


def _cycles(stmt: Statement, pricing: Pricing, cycles: float) -> float:
    return cycles / pricing.facts[ENGINE_CLOCK[stmt.op.engine]]


def _matmul(stmt: Statement, pricing: Pricing) -> Work:
    lhs, rhs = stmt.operands[0].slices, stmt.operands[1].slices
    k, m, n = lhs[0][1] - lhs[0][0], lhs[1][1] - lhs[1][0], rhs[1][1] - rhs[1][0]
    moving = max(n, pricing.facts["matmul_min_moving_cycles"])
    dtype = pricing.dtype(stmt.operands[0].var)
    fixed = pricing.timing.pe_fixed_cycles
    seconds = _cycles(stmt, pricing, fixed + moving * MATMUL_SLOWDOWN.get(dtype, 1.0))
    return Work(seconds, 2 * k * m * n, peak_dtype=dtype)


def _transpose(stmt: Statement, pricing: Pricing) -> Work:
    data = stmt.operands[0].slices
    partitions, free = data[0][1] - data[0][0], _free(data)
    load = math.ceil(free / LOAD_STATIONARY_COLUMNS_PER_CYCLE)
    moving = max(partitions, pricing.facts["matmul_min_moving_cycles"])
    slowdown = TRANSPOSE_SLOWDOWN.get(pricing.dtype(stmt.operands[0].var), 1.0)
    return Work(_cycles(stmt, pricing, (load + moving) * slowdown))


def _stream(stmt: Statement, pricing: Pricing) -> Work:
    reads = stmt.reads
    streams = max(
        1, sum(1 for read in reads if _free(read.slices) > 1)
    )  # a [P, 1] operand is held, not streamed
    cycles = streams * _free(reads[0].slices) + pricing.facts["vector_fixed_cycles"]
    return Work(_cycles(stmt, pricing, cycles), volume(reads[0].slices))


def _dma(stmt: Statement, pricing: Pricing) -> Work:
    op = stmt.op
    hbm = next(p for p in range(len(stmt.operands)) if p not in op.on_chip_positions)
    tile = stmt.operands[op.on_chip_positions[0]].slices
    dtype = pricing.dtype(stmt.operands[hbm].var)
    return Work(pricing.dma_seconds(tile, dtype), bytes=volume(tile) * itemsize(dtype))


def _nothing(stmt: Statement, pricing: Pricing) -> Work:
    return Work(0.0)


WORK_BY_OP: Mapping[str, Callable[[Statement, Pricing], Work]] = {
    "nc_matmul": _matmul,  # LoadStationary + MultiplyMoving
    "nc_transpose": _transpose,  # a matmul against an identity
}
WORK_BY_ENGINE: Mapping[str, Callable[[Statement, Pricing], Work]] = {
    "dma": _dma,  # fixed cost + bytes over bandwidth x efficiency
    "vector": _stream,  # ~N cycles per input + fixed
    "scalar": _stream,
    "none": _nothing,  # allocations
}


class Eviction(NamedTuple):
    """A PSUM tile an engine that reads SBUF only may read: a Vector Engine copy first."""

    position: int
    """The operand read."""
    seconds: float
    """What the copy costs."""
    tile: bool
    """The operand is an on-chip tile (else an output a fragment writes)."""


class Price(NamedTuple):
    """One statement's task on its engine, and what it accounts for."""

    engine: str
    seconds: float
    flops: int
    bytes: int
    """Bytes moved between HBM and on-chip memory."""
    peak_dtype: str | None
    """Input dtype of a Tensor Engine matmul doing work (None otherwise)."""
    buffer: str
    """Where the tile it writes lives: ``sbuf`` or ``psum``."""
    tile_bytes: int
    """Bytes per partition of the tile it writes, as the statement defines it."""
    evictions: tuple[Eviction, ...]
    """Operands that may be PSUM tiles (``in_context`` drops tiles no Tensor Engine work
    precedes); the program's variable table decides."""
    after_tensor: bool = False
    """It or a statement it depends on (directly or not) runs on the Tensor Engine."""


def price(stmt: Statement, pricing: Pricing) -> Price:
    """What ``stmt`` costs (see the module docstring), out of context (``after_tensor``
    unset, every operand that may be a PSUM tile listed)."""
    op = stmt.op
    work_of = WORK_BY_OP.get(op.name) or WORK_BY_ENGINE.get(op.engine)
    if work_of is None:
        raise CostModelError(f"the trn2 cost model has no entry for op {op.name!r} (engine {op.engine})")
    work = work_of(stmt, pricing)
    dst = stmt.operands[op.write_positions[0]]
    shape = tuple(stop for _, stop in dst.slices)
    tile_bytes = (math.prod(shape[1:]) if len(shape) > 1 else 1) * itemsize(pricing.dtype(dst.var))
    evictions: tuple[Eviction, ...] = ()
    if op.engine in READS_SBUF_ONLY:
        kinds = {p: pricing.kind(stmt.operands[p].var) for p in op.read_positions}
        evictions = tuple(
            Eviction(p, _eviction_seconds(stmt.operands[p].slices, pricing.facts), kind == INTERMEDIATE)
            for p, kind in kinds.items()
            if kind not in (None, PARAM)  # only what the program writes can be in PSUM
        )
    engine = STORE_QUEUE if op.name == "store" else op.engine
    return Price(
        "" if engine == "none" else engine,
        work.seconds,
        work.flops,
        work.bytes,
        work.peak_dtype if work.flops else None,
        BUFFER_OF_ENGINE.get(op.engine, "sbuf"),
        tile_bytes,
        evictions,
    )


def _eviction_seconds(slices: Slices, facts: Mapping[str, Any]) -> float:
    """A Vector Engine copy of a PSUM tile region into SBUF."""
    cycles = _free(slices) + facts["vector_fixed_cycles"]
    return float(cycles / facts["vector_engine_hz"])


def in_context(base: Price, program: Program, node: int, priced: Callable[[int], Price]) -> Price:
    """``base``, the price of statement ``node`` out of context, in ``program`` (whose
    statements before ``node`` are ``priced``): ``after_tensor`` set, and only the
    evictions of tiles that Tensor Engine work may have written. A tile is PSUM if its
    defining statement runs on the Tensor Engine, and every write (so every producer of
    a read) of a tile depends on its definition; so a tile read whose producers follow no
    Tensor Engine work is in SBUF. Both depend only on the statement's ancestry, which
    its node key fixes."""
    data, order = _edges(program)
    incoming = data[node]
    after_tensor = base.engine == "tensor" or any(
        priced(src).after_tensor for src, _ in chain(incoming, order[node])
    )
    evictions = base.evictions
    if evictions:
        evictions = tuple(
            [
                e
                for e in evictions
                if not e.tile
                or any(priced(src).after_tensor for src, use in incoming if use.position == e.position)
            ]
        )
    if after_tensor == base.after_tensor and evictions == base.evictions:
        return base
    return Price._make((*base[:-2], evictions, after_tensor))  # the last two fields


# -- prices of a program -------------------------------------------------------------------
class Survey(NamedTuple):
    """What ``estimate`` needs from a program's variable table."""

    signature: tuple[str, ...]
    """Target and HBM tensors (name, kind, dtype): with a node key, it fixes a price."""
    tiles: list[str]
    """Every on-chip intermediate."""
    starts: list[int]
    """The statement defining each of ``tiles``."""


def survey(program: Program) -> Survey:
    """The ``Survey`` of ``program``."""
    infos = program.variables.values()
    on_chip = [info.kind == INTERMEDIATE for info in infos]
    hbm = list(compress(infos, map(operator.not_, on_chip)))
    signature = (program.target.name, *sorted(f"{v.name}:{v.kind}:{v.dtype}" for v in hbm))
    return Survey(
        signature,
        list(compress(map(NAME, infos), on_chip)),
        list(compress(map(DEFINED_BY, infos), on_chip)),
    )


NAME, DEFINED_BY = itemgetter(0), itemgetter(4)
"""Columns of a ``Variable``."""


class Columns(NamedTuple):
    """A ``PriceTable``'s numbers, one entry per row, as arrays (gathered per statement)."""

    queue: np.ndarray
    """Index of the engine in ``PriceTable.engines`` (0: none)."""
    seconds: np.ndarray
    flops: np.ndarray
    bytes: np.ndarray
    tile_bytes: np.ndarray
    buffer: np.ndarray
    """Index of the buffer in ``PriceTable.buffers``."""
    evicts: np.ndarray
    """Whether the row lists evictions."""


class PriceTable:
    """Prices of the statements of programs of one signature (``Survey``): each distinct
    price is a row (a tiled program repeats a few), found by node key (the op,
    attributes, slices and, through its producers, operand dtypes and the statement's
    ancestry) and computed by shape (``Pricing.shape``: all a price out of context
    depends on). Search states share most statements, so a state prices only its new
    node keys; the rest is array gathers over the rows."""

    def __init__(self) -> None:
        self.row_of_key: dict[str, int] = {}
        self.by_shape: dict[Hashable, Price] = {}
        self.prices: list[Price] = []
        """Row -> price."""
        self.engines: list[str] = [""]
        self.buffers: list[str] = []
        self._row_of_price: dict[Price, int] = {}
        self._columns: Columns | None = None

    def rows(self, program: Program, start: int = 0, prefix: np.ndarray | None = None) -> np.ndarray:
        """The row of every statement of ``program``, pricing the new ones; with
        ``prefix``, the rows of a program whose statements before ``start`` have this
        one's node keys, those of the statements before ``start``."""
        keys = program.node_keys
        get = self.row_of_key.get
        if prefix is None or not start:
            rows = np.fromiter(map(get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
        else:
            rows = np.empty(len(keys), dtype=np.int64)
            rows[:start] = prefix[:start]
            rows[start:] = np.fromiter(
                map(get, islice(keys, start, None), repeat(-1)), dtype=np.int64, count=len(keys) - start
            )
        missing = np.flatnonzero(rows < 0).tolist()
        if missing:
            row_of = self._pricer(program, rows)
            for node in missing:
                rows[node] = row_of(node)
        return rows

    def derived_rows(
        self, program: Program, parent_rows: np.ndarray, derivation: Derivation, dirty: Sequence[int]
    ) -> np.ndarray | None:
        """The rows of a program derived from one whose rows are ``parent_rows``,
        looking up (and pricing) only its ``dirty`` statements (ascending), or None when
        that does not suffice (``Trn2CostModel`` guards the rest). A statement that is
        not dirty is the parent's with the same operands and edges; its price differs
        from the parent's only through its context, that is through whether a statement
        it depends on follows Tensor Engine work (``in_context``): so while every dirty
        statement agrees with its parent's on that, all the others keep their rows."""
        rows = np.delete(parent_rows, derivation.gone) if derivation.gone else parent_rows.copy()
        keys, get, prices, old_of = program.node_keys, self.row_of_key.get, self.prices, derivation.old_of
        row_of: Callable[[int], int] | None = None
        for node in dirty:
            row = get(keys[node])
            if row is None:
                row_of = row_of or self._pricer(program, rows)
                row = row_of(node)
            if prices[row].after_tensor != prices[parent_rows[old_of[node]]].after_tensor:
                return None
            rows[node] = row
        return rows

    def _pricer(self, program: Program, rows: np.ndarray) -> Callable[[int], int]:
        """Prices statements of ``program`` in order: the row of a statement (the rows
        of those before it are ``rows``), kept under its node key."""
        pricing = Pricing(program)
        prices, by_shape, row_of_key = self.prices, self.by_shape, self.row_of_key
        statements, keys = program.statements, program.node_keys

        def priced(src: int) -> Price:
            return prices[rows[src]]

        def row_of(node: int) -> int:
            stmt = statements[node]
            shape = pricing.shape(stmt)
            base = by_shape.get(shape)
            if base is None:
                base = by_shape[shape] = price(stmt, pricing)
            row = row_of_key[keys[node]] = self._row(in_context(base, program, node, priced))
            return row

        return row_of

    def _row(self, found: Price) -> int:
        row = self._row_of_price.get(found)
        if row is None:
            row = self._row_of_price[found] = len(self.prices)
            self.prices.append(found)
            self._columns = None
        return row

    @property
    def columns(self) -> Columns:
        """The rows' numbers as arrays."""
        if self._columns is None:
            prices = self.prices
            for p in prices:
                for names, name in ((self.engines, p.engine), (self.buffers, p.buffer)):
                    if name not in names:
                        names.append(name)
            self._columns = Columns(
                np.array([self.engines.index(p.engine) for p in prices], dtype=np.int64),
                np.array([p.seconds for p in prices], dtype=np.float64),
                np.array([p.flops for p in prices], dtype=np.int64),
                np.array([p.bytes for p in prices], dtype=np.int64),
                np.array([p.tile_bytes for p in prices], dtype=np.int64),
                np.array([self.buffers.index(p.buffer) for p in prices], dtype=np.int64),
                np.array([bool(p.evictions) for p in prices], dtype=bool),
            )
        return self._columns


_PRICE_CACHE_LIMIT = 200_000
"""Node keys a cost model keeps prices of (all are dropped past this)."""


class PriceMemo:
    """A ``PriceTable`` per signature, dropped whole when they hold too many keys."""

    def __init__(self, limit: int = _PRICE_CACHE_LIMIT) -> None:
        self.limit = limit
        self.tables: dict[tuple[str, ...], PriceTable] = {}

    def table(self, signature: tuple[str, ...]) -> PriceTable:
        """The table of programs of ``signature``."""
        if sum(len(t.row_of_key) for t in self.tables.values()) > self.limit:
            self.tables.clear()
        found = self.tables.get(signature)
        if found is None:
            found = self.tables[signature] = PriceTable()
        return found


# -- liveness ---------------------------------------------------------------------------
class Tiles(NamedTuple):
    """A program's on-chip tiles, as columns."""

    starts: np.ndarray
    """Defining statements."""
    ends: np.ndarray
    """Last uses (reads or writes)."""
    sizes: np.ndarray
    """Bytes per partition."""
    buffers: np.ndarray
    """Index of the buffer (``PriceTable.buffers``)."""

    @classmethod
    def placed(cls, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray, table: PriceTable) -> Tiles:
        """The tiles living from ``starts`` to ``ends``, sized and placed by their defining statements."""
        defining = rows[starts]
        columns = table.columns
        return cls(starts, ends, columns.tile_bytes[defining], columns.buffer[defining])

    def peaks(self, buffers: int) -> list[tuple[int, int] | None]:
        """Per buffer index, the peak live bytes per partition and the first statement
        where it occurs (None if no tile lives there)."""
        return peak_live_by(self.starts, self.ends, self.sizes, self.buffers, buffers)

    def live_at(self, buffer: int, node: int) -> int:
        """How many tiles of ``buffer`` are live at statement ``node``."""
        held = self.buffers == buffer
        return int(np.count_nonzero((self.starts[held] <= node) & (node <= self.ends[held])))


def _last_uses(program: Program, names: list[str]) -> np.ndarray:
    """The last statement mentioning each of ``names``."""
    last: dict[str, int] = {}
    for node, (_, operands, _, _) in enumerate(program.statements):
        for var, _ in operands:
            last[var] = node
    return np.fromiter(map(last.__getitem__, names), dtype=np.int64, count=len(names))


def _ends_by_statement(statements: int, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """Per statement, the last use of the tile it defines (-1: none); None if a statement
    defines two tiles (an op writing two operands)."""
    out = np.full(statements, -1, dtype=np.int64)
    out[starts] = ends
    return out if np.count_nonzero(out >= 0) == len(starts) else None


def _derived_ends(
    ends: np.ndarray, parent: Program, program: Program, derivation: Derivation
) -> np.ndarray | None:
    """``_ends_by_statement`` of ``program`` from its parent's (``ends``): a tile no edit
    touched keeps its statements, shifted, so its definition and last use are the
    parent's, shifted; a touched tile is mentioned only by dirty statements (the
    derivation marks every statement mentioning a touched on-chip variable), so its
    last use is the last of those. None when that does not hold."""
    new_of = derivation.new_of
    if derivation.gone:  # derivations never reorder: positions shift past the removed ones
        gone = np.array(sorted(derivation.gone), dtype=np.int64)
        out = np.delete(ends, gone)
        held = out >= 0
        kept = out[held]
        out[held] = kept - np.searchsorted(gone, kept)  # a removed last use is a touched tile's
    else:  # nothing removed: same positions
        out = ends.copy()
    tiles: set[str] = set()
    for var in derivation.touched:
        was = parent.variables.get(var)
        if was is not None and was.kind == INTERMEDIATE and was.defined_by is not None:
            at = new_of[was.defined_by]
            if at >= 0:
                out[at] = -1
        now = program.variables.get(var)
        if now is not None and now.kind == INTERMEDIATE:
            tiles.add(var)
    if not tiles:
        return out
    last: dict[str, int] = {}
    statements = program.statements
    for node in derivation.dirty:
        for var, _ in statements[node].operands:
            if var in tiles and last.get(var, -1) < node:
                last[var] = node
    variables = program.variables
    for var in tiles:
        start = variables[var].defined_by
        if start is None or out[start] >= 0 or last.get(var, -1) < start:
            return None
        out[start] = last[var]
    return out


# -- PSUM ---------------------------------------------------------------------------------
class Placement:
    """Which variables of a program live in PSUM: a tile where its defining statement
    puts it, an HBM tensor a fragment writes where its first write puts it (found on
    demand: only the variables read by an engine that reads SBUF only matter)."""

    def __init__(self, program: Program, rows: np.ndarray, table: PriceTable) -> None:
        self.program = program
        self.rows = rows
        self.buffer_of_row = table.columns.buffer
        self.psum = table.buffers.index("psum") if "psum" in table.buffers else -1
        self.known: dict[str, bool] = {}

    def in_psum(self, var: str) -> bool:
        """Whether ``var`` lives in PSUM."""
        found = self.known.get(var)
        if found is None:
            found = self.known[var] = self._in_psum(var)
        return found

    def _in_psum(self, var: str) -> bool:
        info = self.program.variables.get(var)
        if info is None or info.kind == PARAM or self.psum < 0:
            return False
        start = info.defined_by
        if start is None:
            start = next((n for n, s in enumerate(self.program.statements) if s.dst.var == var), None)
        return start is not None and int(self.buffer_of_row[self.rows[start]]) == self.psum


def _evictions(
    program: Program, rows: np.ndarray, table: PriceTable, nodes: np.ndarray, out: dict[int, list[Task]]
) -> dict[int, list[Task]]:
    """Set in ``out``, per statement of ``nodes`` that has some, the tasks queued before
    it (a new list: runs share theirs): for a DMA transfer, its fixed latency (a task of
    no engine, after the transfer's inputs); for a statement reading PSUM tiles on an
    engine that reads SBUF only, the Vector Engine copies evicting them to SBUF."""
    placement = Placement(program, rows, table)
    known, in_psum = placement.known, placement.in_psum
    prices, statements, data = table.prices, program.statements, program.incoming[0]
    latency: dict[int, list[Task]] = {}
    queues = [table.engines.index(q) for q in DMA_QUEUES if q in table.engines]
    if queues:
        fixed = float(program.target.facts["dma_dge_fixed_seconds"])
        transfers = nodes[np.isin(table.columns.queue[rows[nodes]], queues)]
        for node in transfers.tolist():
            latency[node] = [Task("", fixed, tuple([src for src, _ in data[node]]))]
            out[node] = latency[node]
    nodes = nodes[table.columns.evicts[rows[nodes]]]
    sync = timing_constants("trn2").engine_sync_ns * 1e-9
    for node, row in zip(nodes.tolist(), rows[nodes].tolist(), strict=True):
        operands = statements[node].operands
        tasks = latency.get(node, [])
        copies = 0.0
        for position, seconds, _ in prices[row].evictions:
            var = operands[position].var
            psum = known.get(var)
            if psum if psum is not None else in_psum(var):
                sources = tuple([src for src, use in data[node] if use.position == position])
                tasks.append(Task("vector", seconds, sources))
                copies += seconds
        if tasks and latency.get(node) and copies:
            # the transfer reads the copies: its latency runs after the Tensor Engine's
            # result reaches the Vector Engine (the semaphore hand-over) and is copied
            first = tasks[0]
            tasks[0] = Task(first.engine, first.seconds + sync + copies, first.deps)
        if tasks:
            out[node] = tasks
    return out


def _derived_evictions(
    inserted: Mapping[int, list[Task]], derivation: Derivation, dirty: Set[int]
) -> dict[int, list[Task]]:
    """The evictions of a derived program's statements that are not dirty, from its
    parent's (``inserted``): such a statement reads what it read in the parent, from the
    same producers, shifted (``Trn2CostModel._derived`` makes sure the rest agrees)."""
    new_of = derivation.new_of
    shift = min(derivation.gone, default=len(new_of))
    out: dict[int, list[Task]] = {}
    for node, tasks in inserted.items():
        new = new_of[node]
        if new < 0 or new in dirty:
            continue
        if node < shift:  # before the first removed statement: nothing moved
            out[node] = tasks
        else:
            out[new] = [
                Task(engine, seconds, tuple([new_of[d] for d in deps])) for engine, seconds, deps in tasks
            ]
    return out


# -- the model ----------------------------------------------------------------------------
class Run(NamedTuple):
    """What ``estimate`` keeps of a program, for the programs derived from it."""

    program: weakref.ref[Program]
    table: PriceTable
    signature: tuple[str, ...]
    rows: np.ndarray
    ends: np.ndarray | None
    """``_ends_by_statement`` (None: derived programs are estimated in full)."""
    inserted: dict[int, list[Task]]
    """The evictions before each statement (``_evictions``)."""
    trace: Trace
    report: CostReport


_RUN_BUDGET = 1_000_000
"""Statements the kept runs of a cost model may hold in all."""


class Runs:
    """The runs of recently estimated programs, by identity (a ``Program`` hashes by its
    canonical hash, so equal programs would share a ``WeakKeyDictionary`` entry): each is
    dropped when its program dies, and the least recently used ones when they hold more
    than ``budget`` statements."""

    def __init__(self, budget: int = _RUN_BUDGET) -> None:
        self.budget = budget
        self.held = 0
        self.by_id: OrderedDict[int, Run] = OrderedDict()
        self.lock = threading.RLock()  # a program may die (and be forgotten) in any thread

    def get(self, program: Program) -> Run | None:
        """The run of ``program`` (marked recently used), if kept."""
        key = id(program)
        with self.lock:
            run = self.by_id.get(key)
            if run is None or run.program() is not program:
                return None
            self.by_id.move_to_end(key)
            return run

    def put(self, program: Program, run: Run) -> None:
        """Keep ``run``, the run of ``program``."""
        key = id(program)
        with self.lock:
            self.drop(key)
            self.by_id[key] = run
            self.held += len(run.rows)
            while self.held > self.budget and len(self.by_id) > 1:
                _, oldest = self.by_id.popitem(last=False)
                self.held -= len(oldest.rows)
        weakref.finalize(program, _forget, weakref.ref(self), key).atexit = False

    def drop(self, key: int) -> None:
        """Forget the run of the program ``key`` (its id)."""
        with self.lock:
            run = self.by_id.pop(key, None)
            if run is not None:
                self.held -= len(run.rows)

    def __len__(self) -> int:
        return len(self.by_id)


def _forget(runs: weakref.ref[Runs], key: int) -> None:
    """A program died: its run goes (the finalizer holds its ``Runs`` weakly, so a
    dropped cost model does not live on with the programs it estimated)."""
    found = runs()
    if found is not None:
        found.drop(key)


class Trn2CostModel:
    """The analytic Trainium2 cost model (see the module docstring: a program derived
    from one it estimated is estimated from the parent's ``Run``)."""

    name = "trn2"

    def __init__(self) -> None:
        self._memo = PriceMemo()
        self._runs = Runs()
        self._lock = threading.Lock()  # one estimate at a time: the caches are shared

    def estimate(self, program: Program) -> CostReport:
        with self._lock:
            run = self._runs.get(program)
            if run is None:
                run = self._derived(program) or self._full(program)
                self._runs.put(program, run)
            return run.report

    def _full(self, program: Program) -> Run:
        facts = _facts(program)
        found = survey(program)
        table = self._memo.table(found.signature)
        rows = table.rows(program)
        columns = table.columns
        starts = np.array(found.starts, dtype=np.int64)
        ends = _last_uses(program, found.tiles)
        inserted = _evictions(program, rows, table, np.arange(len(rows)), {})
        schedule, trace = traced_schedule(
            columns.queue[rows].tolist(),
            table.engines,
            columns.seconds[rows].tolist(),
            *_edges(program),
            inserted,
        )
        report = self._report(program, facts, schedule, rows, Tiles.placed(starts, ends, rows, table), table)
        ends_by_statement = _ends_by_statement(len(rows), starts, ends)
        return Run(
            weakref.ref(program), table, found.signature, rows, ends_by_statement, inserted, trace, report
        )

    def _derived(self, program: Program) -> Run | None:
        """The run of ``program`` from its parent's (None: estimate it in full). The
        statements before the first dirty or removed one are the parent's; the others
        that are not dirty are the parent's too, shifted, with the same edges and tiles
        (the derivation marks every statement whose statement, edges or on-chip
        variables changed), so they keep their prices and evictions when the dirty
        statements keep their context (``PriceTable.derived_rows``) and the touched
        variables their dtypes and placement; else they are looked up by node key."""
        derivation = program.derivation
        parent = derivation.parent() if derivation is not None else None
        before = self._runs.get(parent) if parent is not None else None
        if derivation is None or parent is None or before is None or before.ends is None:
            return None
        touched = derivation.touched
        if not _same_hbm(parent, program, touched):
            return None
        table = self._memo.table(before.signature)
        if table is not before.table:  # the price memo was emptied
            return None
        ends = _derived_ends(before.ends, parent, program, derivation)
        if ends is None:
            return None
        n = len(program.statements)
        dirty = sorted(derivation.dirty)
        start = before.trace.resume_point(min(dirty[0] if dirty else n, min(derivation.gone, default=n)))
        rows = (
            table.derived_rows(program, before.rows, derivation, dirty)
            if _same_dtypes(parent, program, touched)
            else None
        )
        if rows is not None:
            inserted = _derived_evictions(before.inserted, derivation, derivation.dirty)
            looked_at = np.array(dirty, dtype=np.int64)
        else:
            rows = table.rows(program, start, before.rows)
            inserted = {node: tasks for node, tasks in before.inserted.items() if node < start}
            looked_at = np.arange(start, n)
        if not _same_placement(parent, before.rows, program, rows, table, touched):
            return None
        _evictions(program, rows, table, looked_at, inserted)
        columns = table.columns
        resumed = rows[start:]
        schedule, trace = traced_schedule(
            columns.queue[resumed].tolist(),
            table.engines,
            columns.seconds[resumed].tolist(),
            *_edges(program),
            inserted,
            before.trace,
            start,
        )
        starts = np.flatnonzero(ends >= 0)
        tiles = Tiles.placed(starts, ends[starts], rows, table)
        report = self._report(program, _facts(program), schedule, rows, tiles, table)
        return Run(weakref.ref(program), table, before.signature, rows, ends, inserted, trace, report)

    def _report(
        self,
        program: Program,
        facts: Mapping[str, Any],
        schedule: Schedule,
        rows: np.ndarray,
        tiles: Tiles,
        table: PriceTable,
    ) -> CostReport:
        columns = table.columns
        uses = np.bincount(rows, minlength=len(table.prices))
        dtypes = {table.prices[row].peak_dtype for row in np.flatnonzero(uses).tolist()}
        peak_dtypes = [d for d in dtypes if d is not None]
        peak = max((peak_flops(facts, d) for d in peak_dtypes), default=peak_flops(facts, "bfloat16"))
        target = program.target
        reasons = []
        used: dict[str, int] = {}
        buffers = table.buffers
        peaks = tiles.peaks(len(buffers))
        for buffer, capacity in (
            ("sbuf", target.sbuf_bytes_per_partition),
            ("psum", target.psum_bytes_per_partition),
        ):
            peak_of = peaks[buffers.index(buffer)] if buffer in buffers else None
            if peak_of is None:
                continue
            used[buffer], node = peak_of
            if used[buffer] > capacity:
                live = tiles.live_at(buffers.index(buffer), node)
                reasons.append(
                    f"peak {buffer.upper()} {used[buffer] / 1024:.1f} KiB per partition at statement "
                    f"{node} ({live} live tiles) exceeds {capacity / 1024:.1f} KiB on {target.name}"
                )
        return CostReport(
            model=self.name,
            target=target.name,
            seconds=schedule.seconds,
            engine_seconds=schedule.busy,
            bytes_moved=int(uses @ columns.bytes),
            flops=int(uses @ columns.flops),
            peak_flops=peak,
            knee=peak / bandwidth(facts),
            statements=len(program.statements),
            peak_sbuf_bytes=used.get("sbuf", 0),
            peak_psum_bytes=used.get("psum", 0),
            sbuf_capacity=target.sbuf_bytes_per_partition,
            psum_capacity=target.psum_bytes_per_partition,
            feasible=not reasons,
            reason="; ".join(reasons),
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (Trn2CostModel, ())  # sent to worker processes without its caches

    def __repr__(self) -> str:
        return "<cost model trn2>"


def _same_hbm(parent: Program, program: Program, touched: Set[str]) -> bool:
    """Whether the touched variables that live in HBM keep their kind and dtype (so the
    programs have one ``Survey.signature``)."""
    for var in touched:
        was, now = parent.variables.get(var), program.variables.get(var)
        in_hbm = [info.kind != INTERMEDIATE for info in (was, now) if info is not None]
        if any(in_hbm) and (was is None or now is None or (was.kind, was.dtype) != (now.kind, now.dtype)):
            return False
    return True


def _same_dtypes(parent: Program, program: Program, touched: Set[str]) -> bool:
    """Whether the touched tiles keep their dtypes: then so does every other tile, whose
    dtype follows unchanged statements up to a touched variable or an HBM tensor."""
    was, now = Pricing(parent), Pricing(program)
    for var in touched:
        old, new = parent.variables.get(var), program.variables.get(var)
        both = old is not None and new is not None and old.kind == INTERMEDIATE == new.kind
        if both and was.dtype(var) != now.dtype(var):
            return False
    return True


def _same_placement(
    parent: Program,
    parent_rows: np.ndarray,
    program: Program,
    rows: np.ndarray,
    table: PriceTable,
    touched: Set[str],
) -> bool:
    """Whether the touched HBM tensors stay where they were (a tile read before the first
    change is defined before it; an HBM tensor's first write need not be)."""
    was, now = Placement(parent, parent_rows, table), Placement(program, rows, table)
    return all(
        was.in_psum(var) == now.in_psum(var)
        for var in touched
        if (info := program.variables.get(var)) is not None and info.kind != INTERMEDIATE
    )


def _edges(program: Program) -> tuple[Edges, Edges]:
    """Per statement, its incoming data and ordering edges ``(source, label)``
    (``Program.incoming``: the schedule needs only the sources, not ``pred_of``'s sorted
    union per statement)."""
    return program.incoming


@hookimpl
def nkigym_graph_register_cost_models() -> list[type[Trn2CostModel]]:
    return [Trn2CostModel]
