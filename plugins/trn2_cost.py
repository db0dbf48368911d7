"""``trn2``: an analytic cost model of one Trainium2 NeuronCore-v3 (numbers from
``/work/shared/REFERENCE.md`` via ``TRN2.facts``). Modeled, not measured.

Per statement (the tables below, keyed by op name or engine):

- **DMA** (``load``, ``store``): the core's 16 DMA engines serve one transfer at a
  time at their aggregate bandwidth (16 x 23 B/ns); a transfer costs a fixed ~1.3 us
  plus its bytes over that bandwidth times an efficiency set by the bytes per
  partition: a square-root ramp from the overhead-bound 256 B per partition (a row
  costs as if it held 256 B) to saturation at 4 KiB per partition.
- **Tensor Engine** (``nc_matmul``): LoadStationary (M/4 cycles, fast weight load)
  plus MultiplyMoving (max(N, 64) cycles) at 2.4 GHz, 4x slower for fp32 inputs;
  ``nc_transpose`` is a matmul against an identity (2x slower for fp32 in transpose mode).
- **Vector / Scalar Engines**: ~N cycles per input operand (N = elements per
  partition) plus ~100 fixed cycles, at 0.96 / 1.2 GHz.
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
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Hashable, Mapping
from itertools import accumulate, chain, compress, count, repeat
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np

from nkigym_graph import hookimpl
from nkigym_graph.cost import (
    CostModelError,
    CostReport,
    Schedule,
    Task,
    dtype_of,
    itemsize,
    node_schedule,
    peak_live,
)
from nkigym_graph.cost.schedule import Edges
from nkigym_graph.program import Program
from nkigym_graph.slices import Slices, volume
from nkigym_graph.statement import Statement
from nkigym_graph.variables import INTERMEDIATE, PARAM

RESULT_DTYPE = {"nc_matmul": "float32", "nc_transpose": "float32"}
"""Ops whose result dtype is fixed: the Tensor Engine writes fp32 into PSUM."""
BUFFER_OF_ENGINE = {"tensor": "psum"}
"""Where an engine's results live (default: SBUF)."""
READS_SBUF_ONLY = frozenset({"dma", "tensor"})
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
    "dma_fixed_seconds",
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
    facts = program.target.facts
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
        return (
            op.name,
            op.engine,
            stmt.attrs,
            stmt.accumulate,
            tuple((slices, self.dtype(var), self.kind(var)) for var, slices in stmt.operands),
        )

    def dma_seconds(self, data: Slices, dtype: str) -> float:
        """Seconds moving the tile ``data`` (the fixed cost aside; see the module docstring)."""
        partitions = data[0][1] - data[0][0]
        per_partition = volume(data) * itemsize(dtype) / partitions
        low = self.facts["dma_overhead_bound_bytes_per_partition"]
        saturating = self.facts["dma_saturating_bytes_per_partition"]
        efficiency = math.sqrt(min(max(per_partition, low), saturating) / saturating)
        return partitions * max(per_partition, low) / (self.bandwidth * efficiency)


def bandwidth(facts: Mapping[str, Any]) -> float:
    """The core's DMA bandwidth in bytes per second."""
    return float(facts["dma_engines"] * facts["dma_bytes_per_ns_per_engine"] * 1e9)


def peak_flops(facts: Mapping[str, Any], dtype: str) -> float:
    """Tensor Engine peak FLOP/s for matmul inputs of ``dtype``."""
    return float(facts[PEAK_FACT.get(dtype, "peak_flops_bf16")])


def _free(slices: Slices) -> int:
    """Elements per partition of a tile region."""
    return volume(slices) // max(1, slices[0][1] - slices[0][0])


def _cycles(stmt: Statement, pricing: Pricing, cycles: float) -> float:
    return cycles / pricing.facts[ENGINE_CLOCK[stmt.op.engine]]


def _matmul(stmt: Statement, pricing: Pricing) -> Work:
    lhs, rhs = stmt.operands[0].slices, stmt.operands[1].slices
    k, m, n = lhs[0][1] - lhs[0][0], lhs[1][1] - lhs[1][0], rhs[1][1] - rhs[1][0]
    load = math.ceil(m / LOAD_STATIONARY_COLUMNS_PER_CYCLE)
    moving = max(n, pricing.facts["matmul_min_moving_cycles"])
    dtype = pricing.dtype(stmt.operands[0].var)
    seconds = _cycles(stmt, pricing, (load + moving) * MATMUL_SLOWDOWN.get(dtype, 1.0))
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
    cycles = len(reads) * _free(reads[0].slices) + pricing.facts["vector_fixed_cycles"]
    return Work(_cycles(stmt, pricing, cycles), volume(reads[0].slices))


def _dma(stmt: Statement, pricing: Pricing) -> Work:
    op = stmt.op
    hbm = next(p for p in range(len(stmt.operands)) if p not in op.on_chip_positions)
    tile = stmt.operands[op.on_chip_positions[0]].slices
    dtype = pricing.dtype(stmt.operands[hbm].var)
    seconds = pricing.facts["dma_fixed_seconds"] + pricing.dma_seconds(tile, dtype)
    return Work(seconds, bytes=volume(tile) * itemsize(dtype))


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
    return Price(
        "" if op.engine == "none" else op.engine,
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
    after_tensor = base.engine == "tensor" or any(
        priced(src).after_tensor for src, _ in chain(data[node], order[node])
    )
    evictions = base.evictions
    if evictions:
        producers = program.producers(node)
        evictions = tuple(
            e
            for e in evictions
            if not e.tile or any(priced(src).after_tensor for src, at in producers if at == e.position)
        )
    if after_tensor == base.after_tensor and evictions == base.evictions:
        return base
    return base._replace(evictions=evictions, after_tensor=after_tensor)


# -- prices of a program -------------------------------------------------------------------
class Survey(NamedTuple):
    """What ``estimate`` needs from a program's variable table."""

    signature: tuple[str, ...]
    """Target and HBM tensors (name, kind, dtype): with a node key, it fixes a price."""
    tiles: list[str]
    """Every on-chip intermediate."""
    starts: list[int]
    """The statement defining each of ``tiles``."""
    written: list[tuple[str, int | None]]
    """``(name, defining statement)`` of every HBM tensor the program writes (outputs)."""


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
        [(v.name, v.defined_by) for v in hbm if v.kind != PARAM],
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

    def rows(self, program: Program) -> np.ndarray:
        """The row of every statement of ``program``, pricing the new ones."""
        keys = program.node_keys
        rows = np.fromiter(map(self.row_of_key.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
        missing = np.flatnonzero(rows < 0).tolist()
        if missing:
            pricing = Pricing(program)
            prices = self.prices

            def priced(node: int) -> Price:
                return prices[rows[node]]

            for node in missing:
                stmt = program.statements[node]
                shape = pricing.shape(stmt)
                base = self.by_shape.get(shape)
                if base is None:
                    base = self.by_shape[shape] = price(stmt, pricing)
                rows[node] = self.row_of_key[keys[node]] = self._row(in_context(base, program, node, priced))
        return rows

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

    names: list[str]
    starts: np.ndarray
    """Defining statements."""
    ends: np.ndarray
    """Last uses (reads or writes)."""
    sizes: np.ndarray
    """Bytes per partition."""
    buffers: np.ndarray
    """Index of the buffer (``PriceTable.buffers``)."""

    @classmethod
    def of(cls, program: Program, found: Survey, rows: np.ndarray, table: PriceTable) -> Tiles:
        """The tiles ``survey`` found, sized and placed by their defining statements."""
        starts = np.array(found.starts, dtype=np.int64)
        defining = rows[starts]
        columns = table.columns
        return cls(
            found.tiles,
            starts,
            _last_uses(program, found.tiles),
            columns.tile_bytes[defining],
            columns.buffer[defining],
        )

    def named_in(self, buffer: int) -> set[str]:
        """The names of the tiles living in ``buffer``."""
        return set(compress(self.names, (self.buffers == buffer).tolist()))

    def peak(self, buffer: int) -> tuple[int, int, int] | None:
        """The peak live bytes per partition of ``buffer``, the first statement where it
        occurs and how many tiles are live there (None if no tile lives there)."""
        held = self.buffers == buffer
        if not held.any():
            return None
        starts, ends = self.starts[held], self.ends[held]
        used, node = peak_live(starts, ends, self.sizes[held])
        return used, node, int(np.count_nonzero((starts <= node) & (node <= ends)))


def _last_uses(program: Program, names: list[str]) -> np.ndarray:
    """The last statement mentioning each of ``names`` (without a Python-level loop: the
    last operand mentioning each variable, then the statement holding that operand)."""
    operands = list(map(OPERANDS, program.statements))
    last = dict(zip(map(VAR, chain.from_iterable(operands)), count(), strict=False))
    ends = np.fromiter(accumulate(map(len, operands)), dtype=np.int64, count=len(operands))
    flat = np.fromiter(map(last.__getitem__, names), dtype=np.int64, count=len(names))
    return np.searchsorted(ends, flat, side="right")


OPERANDS, VAR = itemgetter(1), itemgetter(0)
"""The operands of a ``Statement``; the variable of an ``Operand``."""


# -- the model ----------------------------------------------------------------------------
class Trn2CostModel:
    """The analytic Trainium2 cost model (see the module docstring)."""

    name = "trn2"

    def __init__(self) -> None:
        self._memo = PriceMemo()

    def estimate(self, program: Program) -> CostReport:
        facts = _facts(program)
        found = survey(program)
        table = self._memo.table(found.signature)
        rows = table.rows(program)
        columns = table.columns
        tiles = Tiles.of(program, found, rows, table)
        psum = _psum(program, found, tiles, rows, table)
        schedule = node_schedule(
            columns.queue[rows].tolist(),
            table.engines,
            columns.seconds[rows].tolist(),
            *_edges(program),
            _evictions(program, rows, table, psum),
        )
        uses = np.bincount(rows, minlength=len(table.prices))
        dtypes = {table.prices[row].peak_dtype for row in np.flatnonzero(uses).tolist()}
        peak_dtypes = [d for d in dtypes if d is not None]
        peak = max((peak_flops(facts, d) for d in peak_dtypes), default=peak_flops(facts, "bfloat16"))
        moved, flops = int(uses @ columns.bytes), int(uses @ columns.flops)
        return self._report(program, facts, schedule, moved, flops, peak, tiles, table.buffers)

    def _report(
        self,
        program: Program,
        facts: Mapping[str, Any],
        schedule: Schedule,
        moved: int,
        flops: int,
        peak: float,
        tiles: Tiles,
        buffers: list[str],
    ) -> CostReport:
        target = program.target
        reasons = []
        used: dict[str, int] = {}
        for buffer, capacity in (
            ("sbuf", target.sbuf_bytes_per_partition),
            ("psum", target.psum_bytes_per_partition),
        ):
            peak_of = tiles.peak(buffers.index(buffer)) if buffer in buffers else None
            if peak_of is None:
                continue
            used[buffer], node, live = peak_of
            if used[buffer] > capacity:
                reasons.append(
                    f"peak {buffer.upper()} {used[buffer] / 1024:.1f} KiB per partition at statement "
                    f"{node} ({live} live tiles) exceeds {capacity / 1024:.1f} KiB on {target.name}"
                )
        return CostReport(
            model=self.name,
            target=target.name,
            seconds=schedule.seconds,
            engine_seconds=schedule.busy,
            bytes_moved=moved,
            flops=flops,
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
        return (Trn2CostModel, ())  # sent to worker processes without its price cache

    def __repr__(self) -> str:
        return "<cost model trn2>"


def _edges(program: Program) -> tuple[Edges, Edges]:
    """Per statement, its incoming data and ordering edges ``(source, label)``
    (``Program.incoming``: the schedule needs only the sources, not ``pred_of``'s sorted
    union per statement)."""
    return program.incoming


def _psum(program: Program, found: Survey, tiles: Tiles, rows: np.ndarray, table: PriceTable) -> set[str]:
    """The variables living in PSUM: tiles, and HBM tensors a fragment first writes from
    the Tensor Engine (a variable lives where its first write puts it)."""
    out = tiles.named_in(table.buffers.index("psum")) if "psum" in table.buffers else set()
    for name, start in found.written:
        if start is None:
            start = next((n for n, s in enumerate(program.statements) if s.dst.var == name), None)
        if start is not None and table.prices[rows[start]].buffer == "psum":
            out.add(name)
    return out


def _evictions(
    program: Program, rows: np.ndarray, table: PriceTable, psum: set[str]
) -> dict[int, list[Task]]:
    """Per statement, the Vector Engine copies evicting the PSUM tiles it reads to SBUF."""
    out: dict[int, list[Task]] = {}
    for node in np.flatnonzero(table.columns.evicts[rows]).tolist():
        operands = program.statements[node].operands
        for position, seconds, _ in table.prices[rows[node]].evictions:
            if operands[position].var in psum:
                sources = tuple(src for src, at in program.producers(node) if at == position)
                out.setdefault(node, []).append(Task("vector", seconds, sources))
    return out


@hookimpl
def nkigym_graph_register_cost_models() -> list[type[Trn2CostModel]]:
    return [Trn2CostModel]
