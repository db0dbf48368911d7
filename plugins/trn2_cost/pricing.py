"""The price of one statement on a Trainium2 NeuronCore: the work of its engine
(``WORK_BY_OP``, ``WORK_BY_ENGINE``), PSUM evictions before engines that cannot read
PSUM, and the price of a statement in its program's context (``in_context``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from itertools import chain
from typing import Any, NamedTuple

from nkigym_graph.cost import DEFAULT_DTYPE, CostModelError, itemsize
from nkigym_graph.cost.schedule import Edges
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.schedule_fit import is_statistic
from nkigym_graph.ir.slices import Slices, volume
from nkigym_graph.ir.statement import Statement
from nkigym_graph.ir.targets import BUILTIN_TARGETS
from nkigym_graph.ir.variables import INTERMEDIATE, PARAM
from nkigym_graph.nki_sim.timing.constants import timing_constants
from nkigym_graph.plugin.registry import registered_cost_models, registered_targets
from nkigym_graph.scheduling.allocate import STATISTIC_DTYPE, working_dtype

RESULT_DTYPE = {"nc_matmul": "float32"}
"""Ops whose result dtype is fixed: a matmul accumulates fp32 in PSUM. A transpose keeps its
input's dtype (NKI's ``nc_transpose`` writes PSUM in the input dtype), so a matmul reading
a transposed bf16 tile runs at the bf16 rate."""
BUFFER_OF_ENGINE = {"tensor": "psum"}
"""Where an engine's results live (default: SBUF)."""
READS_SBUF_ONLY = frozenset({"dma", "tensor", "gpsimd"})
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


def facts_of(program: Program) -> Mapping[str, Any]:
    target = program.target
    if target.family != "neuron":
        known = {**BUILTIN_TARGETS, **registered_targets()}
        priced = ", ".join(sorted(n for n, t in known.items() if t.family == "neuron"))
        others = sorted(
            name
            for name, model in registered_cost_models().items()
            if target.family in getattr(model, "families", ())
        )
        which = f"the {', '.join(others)} cost model prices it" if others else "no cost model prices it"
        raise CostModelError(
            f"the trn2 cost model prices Trainium targets ({priced}); {program.name!r} is tiled for "
            f"{target.name}, a {target.family} target: {which} (estimate and search pick it by default)"
        )
    facts = target.facts
    missing = [f for f in REQUIRED_FACTS if f not in facts]
    if missing:
        raise CostModelError(
            f"the trn2 cost model cannot price target {program.target.name!r}: it lacks the "
            f"NeuronCore figures (clocks, peak FLOP/s, DMA bandwidth) the model reads"
        )
    return facts


class Pricing:
    """The facts and tile dtypes of one program, for pricing its statements."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.facts = facts_of(program)
        self.dtypes: dict[str, str] = {}
        self.bandwidth = bandwidth(self.facts)
        self.timing = timing_constants("trn2")

    def dtype(self, var: str) -> str:
        """The dtype of ``var`` (found on demand: most statements are priced from the cache)."""
        found = self.dtypes.get(var)
        return found if found is not None else kernel_dtype(self.program, var, self.dtypes)

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
    streams = max(1, sum(1 for read in reads if _free(read.slices) > 1))  # a [P, 1] operand is held
    cycles = streams * _free(reads[0].slices) + _fixed_cycles(stmt.op.engine, pricing)
    return Work(_cycles(stmt, pricing, cycles), volume(reads[0].slices))


def _fixed_cycles(engine: str, pricing: Pricing) -> float:
    """Fixed cycles of one Vector or Scalar instruction: the Vector Engine's ~100
    (REFERENCE), the Scalar Engine's from the timing constants the profile shares
    (``scalar_fixed_cycles``: activation-table and pipeline fill, twice the Vector
    Engine's), not the Vector Engine's figure at the Scalar clock."""
    if engine == "scalar":
        return pricing.timing.scalar_fixed_cycles
    return pricing.facts["vector_fixed_cycles"]


def _gpsimd(stmt: Statement, pricing: Pricing) -> Work:
    """A GpSimd instruction (``affine_select``): the timing model's fixed cycles plus
    cycles per element at the GpSimd clock."""
    timing = pricing.timing
    cycles = timing.gpsimd_fixed_cycles + timing.gpsimd_cycles_per_element * _free(stmt.reads[0].slices)
    return Work(cycles / (timing.gpsimd_clock_ghz * 1e9), volume(stmt.reads[0].slices))


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
    "gpsimd": _gpsimd,  # fixed cycles + cycles per element (cannot read PSUM)
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
    buffer = BUFFER_OF_ENGINE.get(op.engine, "sbuf")
    if buffer == "psum":  # a PSUM tile takes whole banks, as the emitter and the simulator count it
        bank = int(pricing.facts.get("psum_bank_bytes", 2048))
        tile_bytes = -(-tile_bytes // bank) * bank
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
        buffer,
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
    data, order = edges_of(program)
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


def edges_of(program: Program) -> tuple[Edges, Edges]:
    """Per statement, its incoming data and ordering edges ``(source, label)``
    (``Program.incoming``: the schedule needs only the sources, not ``pred_of``'s sorted
    union per statement)."""
    return program.incoming


def kernel_dtype(program: Program, var: str, known: dict[str, str]) -> str:
    """The dtype of ``var``'s tile as the NKI backend emits it (``known`` memoizes): a
    parameter or output its declared one; a matmul result fp32 (PSUM, ``RESULT_DTYPE``); the
    result of an op that keeps its input's dtype (a load, a transpose) its input's; any
    other computed tile the working dtype (the program's output dtype; fp32 in a float64
    program, as the hardware has no float64), except a ``[P, 1]`` statistic, fp32 (as
    the kernel's streams hold them, ``scheduling.allocate``).
    So the exponentials of a bf16 attention evicted from PSUM are bf16, and the matmul
    reading them runs at the bf16 rate, as in the kernel::

        s = nc_matmul(q_t, k_t)      # float32 (PSUM)
        p = activation(s, op="exp")  # bfloat16 (the working dtype), not s's float32
    """
    found = known.get(var)
    if found is not None:
        return found
    info = program.variables.get(var)
    writers = program.writers_of(var) if info is not None and not info.dtype else ()
    if info is None or info.dtype or not writers:
        dtype = (info.dtype if info is not None else None) or DEFAULT_DTYPE
    else:
        ops = [program[node].op for node in writers]
        pinned = next((RESULT_DTYPE[op.name] for op in ops if op.name in RESULT_DTYPE), None)
        if pinned is not None:
            dtype = pinned
        elif all(op.result_keeps_input_dtype and op.read_positions for op in ops):
            first = program[writers[0]]
            dtype = kernel_dtype(program, first.operands[first.op.read_positions[0]].var, known)
        elif is_statistic(info.shape):
            dtype = STATISTIC_DTYPE
        else:
            dtype = working_dtype(program)
    known[var] = dtype
    return dtype
