"""The one table of timing constants the profile prices instructions with.

Every figure the profile prints comes from :class:`TimingConstants`; nothing else in
:mod:`nkigym_graph.nki_sim.timing` holds a number about the hardware. Each field says
where its value comes from. Sources: REFERENCE.md, "Trn2 / NeuronCore-v3 performance
numbers" (the Neuron documentation's engine figures), and the calibration against the
"measured kernel-structure ladder" (``benchmarks/calibration.py``, recorded in
``benchmarks/results/calibration.md``). A value marked *calibrated* was chosen inside
its published range so that the ladder comes out right; the kernels were never given
individual factors.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from nkigym_graph.errors import NkigymError
from nkigym_graph.ir.targets import Target


@dataclass(frozen=True)
class TimingConstants:
    """Clock rates, per-element and fixed costs of one NeuronCore's engines and DMA."""

    name: str

    # -- Tensor Engine (PE): a 128 x 128 systolic array ---------------------------------
    pe_clock_ghz: float = 2.4
    """Tensor Engine clock (REFERENCE: 2.4 GHz; 128 x 128 x 2 x 2.4 GHz = 79 TFLOP/s bf16)."""
    pe_min_moving: int = 64
    """A MultiplyMoving takes max(N, 64) cycles (REFERENCE: "about max(N, 64) cycles")."""
    pe_cycles_per_column_bf16: float = 1.0
    """Cycles per moving column for 16-bit inputs (bf16 / fp16): one column per cycle."""
    pe_cycles_per_column_fp32: float = 4.0
    """fp32 (and tf32) inputs stream 4x slower (REFERENCE: "fp32 inputs ~4x slower", ~20 TFLOP/s)."""
    pe_cycles_per_column_fp8: float = 0.5
    """fp8 inputs stream two rows per cycle (REFERENCE: 158 TFLOP/s fp8 "double-row")."""
    pe_fixed_cycles: int = 16
    """Per matmul: instruction issue and the part of LoadStationary not hidden behind
    the previous MultiplyMoving (the array preloads the next weights while the current
    moving tensor streams). *Calibrated*: the best kernel of the ladder is Tensor-bound
    and lands at ~91%; more than ~20 cycles leaves no room for its load and store."""

    # -- Vector Engine (DVE), Scalar Engine (ACT), GpSimd (POOL) ------------------------
    vector_clock_ghz: float = 0.96
    """Vector Engine clock (REFERENCE: 0.96 GHz)."""
    vector_cycles_per_element: float = 1.0
    """Vector cycles per element per partition for one input (REFERENCE: "~N cycles")."""
    vector_cycles_per_element_two_inputs: float = 2.0
    """... and for two tensor inputs (REFERENCE: "~2N for two")."""
    vector_fixed_cycles: int = 100
    """Fixed cycles per Vector instruction (REFERENCE: "plus ~100 cycles fixed")."""
    scalar_clock_ghz: float = 1.2
    """Scalar (Activation) Engine clock (REFERENCE: 1.2 GHz)."""
    scalar_cycles_per_element: float = 1.0
    """Scalar cycles per element per partition (one element per lane per cycle, like the
    Vector Engine; REFERENCE gives only the clock)."""
    scalar_fixed_cycles: int = 200
    """Fixed cycles per Scalar instruction (activation-table and pipeline fill; taken as
    twice the Vector Engine's, not published)."""
    gpsimd_clock_ghz: float = 1.4
    """GpSimd clock (not in REFERENCE; the Neuron architecture guide's 1.4 GHz)."""
    gpsimd_cycles_per_element: float = 2.0
    """GpSimd cycles per element per partition (eight general-purpose cores for 128
    partitions: about half the Vector Engine's throughput per cycle; not published)."""
    gpsimd_fixed_cycles: int = 150
    """Fixed cycles per GpSimd instruction (not published; between Vector and Scalar)."""

    engine_sync_ns: float = 500.0
    """A compute instruction that needs another compute engine's result (PSUM drained
    by the Scalar Engine, a tile the Vector Engine wrote) starts this long after that
    instruction ends: semaphore signal and wait, and the producer's pipeline drain.
    Latency only (engines keep working meanwhile). *Calibrated* from the ladder's step
    from one PSUM accumulator to two (59% -> 83.7%): that step is the cost of 64 exposed
    PSUM drains, about 1.6 us each on hardware, of which the copy itself is 0.6 us."""

    # -- DMA -----------------------------------------------------------------------------
    dma_queues: int = 16
    """DMA engines (queues) per core (REFERENCE: 16). A transfer's partitions are spread
    over the queues (partition p on queue p mod 16), so a 128-partition tile uses all.
    Each queue has an inbound ring (loads) and an outbound ring (stores)."""
    dma_queue_bytes_per_ns: float = 23.0
    """Bandwidth of one queue's ring (REFERENCE: ~23 B/ns each, ~368 GB/s per core).
    Bytes are counted on the HBM side (a store that casts fp32 to bf16 moves bf16). A
    transfer that adds into its destination (``dst_rmw_op=nl.add``) is priced as a copy
    of the same bytes: not published, and the calibration ladder has no such transfer."""
    dma_fixed_ns: float = 1300.0
    """Fixed cost (latency) of one software-DGE transfer -- ``nl.load``, ``nl.store``,
    assignments to or from HBM (REFERENCE: ~1.3 us). It is latency, not occupancy: a
    queue starts moving the next transfer's bytes while later transfers wait out theirs."""
    dma_fixed_ns_hwdge: float = 600.0
    """Fixed cost of a hardware-DGE ``nisa.dma_copy`` / ``dma_transpose`` (REFERENCE: ~0.6 us)."""
    dma_chunk_overhead_ns: float = 12.0
    """Per contiguous run of a transfer in HBM (one descriptor element; for a plain tile,
    one partition row), on its queue. It makes the size cliff: a 4 KiB run moves at 94%
    of the queue's bandwidth, 1 KiB at 79%, 256 B at 48% (REFERENCE: saturates at >= 4
    KiB per partition, severely overhead-bound below 256 B). *Calibrated* within that
    range by the ladder's streaming rung, whose 1 KiB-run block loads (64 MiB) cost it
    about a point against the two-level-K rungs' 40 MiB."""

    # -- Memory ---------------------------------------------------------------------------
    psum_banks: int = 8
    """PSUM banks per partition (2 KiB each; REFERENCE / NKI documentation)."""
    psum_bank_bytes: int = 2048
    """Bytes per PSUM bank per partition."""
    loop_tile_buffers: int = 3
    """Physical buffers the allocator gives a tile declared inside a loop body: a new
    on-chip tile from the same kernel line reuses the memory of the one allocated this
    many times before it, once that one is dead (one being filled, one being read, one
    in flight; an explicit single buffer is declared outside the loop). Not published:
    with two, a loop that loads a tile per matmul cannot cover the DMA latency and the
    emitted tiled kernels profile ~20% slower than their DMA-bound cost; three or more
    keep the DMA queues busy (tiled 1024^3 fp32: 38.5% with 3, 4 or 8, 30.9% with 2)."""

    # -- Peaks for MFU ---------------------------------------------------------------------
    peak_tflops_bf16: float = 78.6
    """128 x 128 x 2 FLOP x 2.4 GHz (REFERENCE: 79 TFLOP/s dense bf16/fp16)."""
    peak_tflops_fp32: float = 19.7
    """A quarter of bf16 (REFERENCE: ~20 fp32)."""
    peak_tflops_fp8: float = 157.3
    """Twice bf16 (REFERENCE: 158 fp8 double-row)."""

    def peak_tflops(self, dtype_name: str) -> float:
        """Peak matmul TFLOP/s for inputs of ``dtype_name`` (``bfloat16``, ``float32``, ...)."""
        if dtype_name in ("float32", "tfloat32"):
            return self.peak_tflops_fp32
        if dtype_name.startswith("float8"):
            return self.peak_tflops_fp8
        return self.peak_tflops_bf16

    def pe_cycles_per_column(self, dtype_name: str) -> float:
        if dtype_name in ("float32", "tfloat32"):
            return self.pe_cycles_per_column_fp32
        if dtype_name.startswith("float8"):
            return self.pe_cycles_per_column_fp8
        return self.pe_cycles_per_column_bf16

    def as_rows(self) -> list[tuple[str, object]]:
        """(name, value) for every constant, in table order."""
        return [(f.name, getattr(self, f.name)) for f in fields(self) if f.name != "name"]


TRN2_TIMING = TimingConstants(name="trn2")

_TABLES = {"trn2": TRN2_TIMING}


def timing_constants(target: str | Target) -> TimingConstants:
    """The constants for ``target`` (a name or a target): trn2 and targets derived from it
    (same core, e.g. with another SBUF size) use trn2's table; trn1 uses it too for now
    (its engines are slower: its figures are optimistic)."""
    if isinstance(target, str):
        name, core = target, None
    else:
        name, core = target.name, target.facts.get("core")
    table = _TABLES.get(name)
    if table is None and (core == "NeuronCore-v3" or name == "trn1" or core == "NeuronCore-v2"):
        table = TRN2_TIMING
    if table is None:
        raise NkigymError(f"no timing constants for target {name!r} (known: {sorted(_TABLES)})")
    return table
