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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from nkigym_graph import hookimpl
from nkigym_graph.cost import (
    CostModelError,
    CostReport,
    Interval,
    Task,
    dtype_of,
    itemsize,
    list_schedule,
    peak_usage,
)
from nkigym_graph.program import Program
from nkigym_graph.slices import Slices, volume
from nkigym_graph.statement import Statement
from nkigym_graph.variables import INTERMEDIATE

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


class Price(NamedTuple):
    """One statement's task on its engine, and what it accounts for."""

    engine: str
    seconds: float
    flops: int
    bytes: int
    """Bytes moved between HBM and on-chip memory."""
    peak_dtype: str | None
    buffer: str
    """Where the tile it writes lives: ``sbuf`` or ``psum``."""
    tile_bytes: int
    """Bytes per partition of the tile it writes, as the statement defines it."""


PriceKey = tuple[tuple[str, ...], str]
"""The program's signature (target, dtypes of its HBM tensors) and the statement's canonical
node key (op, attributes, slices and, through its producers, the dtypes of its operands)."""
_PRICE_CACHE_LIMIT = 200_000


class Trn2CostModel:
    """The analytic Trainium2 cost model (see the module docstring)."""

    name = "trn2"

    def __init__(self) -> None:
        self._prices: dict[PriceKey, Price] = {}
        """Prices of statements already seen (search states share most statements)."""

    def _price(self, program: Program, node: int, pricing: Pricing) -> Price:
        stmt = program.statements[node]
        op = stmt.op
        work_of = WORK_BY_OP.get(op.name) or WORK_BY_ENGINE.get(op.engine)
        if work_of is None:
            raise CostModelError(f"the trn2 cost model has no entry for op {op.name!r} (engine {op.engine})")
        work = work_of(stmt, pricing)
        dst = stmt.operands[op.write_positions[0]]
        shape = tuple(stop for _, stop in dst.slices)
        tile_bytes = (math.prod(shape[1:]) if len(shape) > 1 else 1) * itemsize(pricing.dtype(dst.var))
        engine = "" if op.engine == "none" else op.engine
        buffer = BUFFER_OF_ENGINE.get(op.engine, "sbuf")
        return Price(engine, work.seconds, work.flops, work.bytes, work.peak_dtype, buffer, tile_bytes)

    def estimate(self, program: Program) -> CostReport:
        facts = _facts(program)
        signature = (
            program.target.name,
            *sorted(f"{n}:{v.dtype}" for n, v in program.variables.items() if v.dtype),
        )
        prices = self._prices
        pricing: Pricing | None = None
        pred = program.graph.pred
        tasks: list[Task] = []
        task_of: list[int] = []
        buffer_of: dict[str, str] = {}
        last_use: dict[str, int] = {}
        tile_bytes: list[int] = []
        flops = moved = 0
        peak_dtypes: set[str] = set()
        for node, (stmt, node_key) in enumerate(zip(program.statements, program.node_keys, strict=True)):
            operands = stmt.operands
            for operand in operands:
                last_use[operand.var] = node
            price = prices.get((signature, node_key))
            if price is None:
                pricing = pricing or Pricing(program)
                price = self._price(program, node, pricing)
                if len(prices) >= _PRICE_CACHE_LIMIT:
                    prices.clear()
                prices[(signature, node_key)] = price
            deps = [task_of[p] for p in pred[node]]
            op = stmt.op
            if price.engine in READS_SBUF_ONLY:
                for position in op.read_positions:
                    if buffer_of.get(operands[position].var) == "psum":
                        deps.append(_eviction(program, node, position, task_of, tasks, facts))
            if price.flops:
                flops += price.flops
                if price.peak_dtype is not None:
                    peak_dtypes.add(price.peak_dtype)
            moved += price.bytes
            dst = operands[op.write_positions[0]].var
            if dst not in buffer_of:
                buffer_of[dst] = price.buffer
            tile_bytes.append(price.tile_bytes)
            task_of.append(len(tasks))
            tasks.append(Task(price.engine, price.seconds, tuple(deps)))
        schedule = list_schedule(tasks)
        peak = max((peak_flops(facts, d) for d in peak_dtypes), default=peak_flops(facts, "bfloat16"))
        intervals = [
            Interval(name, buffer_of[name], tile_bytes[start], start, last_use[name])
            for name, info in program.variables.items()
            if info.kind == INTERMEDIATE and (start := info.defined_by) is not None
        ]
        return self._report(program, facts, schedule.seconds, schedule.busy, moved, flops, peak, intervals)

    def _report(
        self,
        program: Program,
        facts: Mapping[str, Any],
        seconds: float,
        busy: Mapping[str, float],
        moved: int,
        flops: int,
        peak: float,
        intervals: list[Interval],
    ) -> CostReport:
        target = program.target
        peaks = peak_usage(intervals)
        reasons = []
        for buffer, capacity in (
            ("sbuf", target.sbuf_bytes_per_partition),
            ("psum", target.psum_bytes_per_partition),
        ):
            use = peaks.get(buffer)
            if use is not None and use.bytes > capacity:
                reasons.append(
                    f"peak {buffer.upper()} {use.bytes / 1024:.1f} KiB per partition at statement {use.node} "
                    f"({len(use.live)} live tiles) exceeds {capacity / 1024:.1f} KiB on {target.name}"
                )
        return CostReport(
            model=self.name,
            target=target.name,
            seconds=seconds,
            engine_seconds=busy,
            bytes_moved=moved,
            flops=flops,
            peak_flops=peak,
            knee=peak / bandwidth(facts),
            statements=len(program.statements),
            peak_sbuf_bytes=peaks["sbuf"].bytes if "sbuf" in peaks else 0,
            peak_psum_bytes=peaks["psum"].bytes if "psum" in peaks else 0,
            sbuf_capacity=target.sbuf_bytes_per_partition,
            psum_capacity=target.psum_bytes_per_partition,
            feasible=not reasons,
            reason="; ".join(reasons),
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (Trn2CostModel, ())  # sent to worker processes without its price cache

    def __repr__(self) -> str:
        return "<cost model trn2>"


def _eviction(
    program: Program,
    node: int,
    position: int,
    task_of: list[int],
    tasks: list[Task],
    facts: Mapping[str, Any],
) -> int:
    """A Vector Engine copy of the PSUM operand ``position`` of ``node`` into SBUF; its task."""
    operand = program.statements[node].operands[position]
    sources = tuple(task_of[src] for src, pos in program.producers(node) if pos == position)
    cycles = _free(operand.slices) + facts["vector_fixed_cycles"]
    tasks.append(Task("vector", cycles / facts["vector_engine_hz"], sources))
    return len(tasks) - 1


@hookimpl
def nkigym_graph_register_cost_models() -> list[type[Trn2CostModel]]:
    return [Trn2CostModel]
