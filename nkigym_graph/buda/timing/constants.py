"""Every constant of the Tenstorrent cost model, in one table, with its source.

Sources (public):

- [WH] Wormhole n150s/n300s specifications, docs.tenstorrent.com/aibs/wormhole/specifications.html:
  n150s 72 Tensix cores at 1 GHz, 1.5 MB SRAM per core, 12 GB GDDR6 at 288 GB/s,
  262 TFLOPS FP8, 148 TFLOPS BFP8, 74 TFLOPS FP16.
- [HC24] "Blackhole & TT-Metalium: The Standalone AI Computer and its Programming Model",
  Hot Chips 2024 (J. Vasiljevic, D. Capalija): Grayskull 120 Tensix cores, 276 TOPS (FP8),
  100 GB/s LPDDR4; Wormhole 80 cores, 328 TOPS (FP8), 336 GB/s GDDR6; Blackhole 140 cores,
  745 TFLOPS 8-bit, 372 TFLOPS 16-bit, 512 GB/s GDDR6 (32 GB); two NOCs (2D torus).
- [DF] pybuda "Data Formats and Math Fidelity", docs.tenstorrent.com/pybuda/latest/dataformats.html:
  formats and their bits; Bfp formats share one exponent per 16 values; math fidelity
  LoFi / HiFi2 / HiFi3 / HiFi4 takes 1 / 2 / 3 / 4 passes (phases) through the multiplier.
- [TM] tt-metal METALIUM_GUIDE.md and "Compute Engines and Data Flow within Tensix": the
  unpacker copies L1 tiles into the FPU's source registers, the packer copies dest to L1,
  three RISC-V threads (unpack, math, pack) run in parallel; 1 MB (Grayskull) and 1.5 MB
  (Wormhole, Blackhole) of L1 per core.
- [BB] tt-budabackend ``netlist/netlist_parser.cpp`` (dest holds 8 tiles of 16-bit or 4 of
  32-bit data per half) and ``src/net2pipe`` (matmul inputs multicast along rows and
  columns of cores).
- [BBF] tt-budabackend ``netlist/tt_backend_api_types.hpp``: ``MathFidelity`` ``HiFi2_A = 2``
  (the value of ``HiFi2``) and ``HiFi2_B = 10`` (the low three bits are the phase count, 2;
  bit 3 makes the fidelity counter step by 2, as the LLK's ``cmath_common.h`` decodes it:
  ``get_math_num_fidelity_phases``, ``get_math_fidelity_increment``): both are two-phase
  HiFi2 variants. ``perf_lib/op_model/unit_tests/test_op_model.cpp``
  (``MatmulOpFidelityCycles``) expects equal matmul cycles for the two, between LoFi and HiFi3.

Derived figures say how they were derived; ``ESTIMATE`` marks a figure no public document
gives directly (the unpacker, packer, SFPU and NOC rates, the per-ublock handshake and the
fixed op latency): they set the balance between engines, so every result of the model is
modeled, never measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

ESTIMATE = "estimate"
"""Source tag of a figure no public document gives directly."""

FIDELITY_PHASES: Mapping[str, int] = MappingProxyType(
    {"LoFi": 1, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4, "HiFi2_A": 2, "HiFi2_B": 2}
)
"""Passes through the multiplier per math fidelity ([DF]; ``HiFi2_A`` and ``HiFi2_B``
[BBF]). Matmul and multiply run once per pass; the other FPU ops (add, subtract, copies,
max reduce) once."""

FIDELITY_SOURCES: Mapping[str, str] = MappingProxyType({
    "HiFi2_A": "[BBF] MathFidelity::HiFi2_A == HiFi2: two phases",
    "HiFi2_B": "[BBF] MathFidelity::HiFi2_B = 10: two phases, fidelity step 2",
})  # fmt: skip
"""The source of a fidelity's phase count where it is not [DF]."""

TILE_MACS = 32 * 32 * 32
"""Multiply-accumulates of one 32x32 by 32x32 tile product."""


@dataclass(frozen=True)
class Constant:
    """One figure and where it comes from."""

    value: float
    source: str


@dataclass(frozen=True)
class ArchConstants:
    """The figures of one architecture (a ``Constant`` each, so each carries its source)."""

    clock_hz: Constant
    matmul_macs_per_cycle: Constant
    """Per core, at LoFi (one multiplier pass)."""
    dram_bytes_per_s: Constant
    dram_channels: Constant
    noc_bytes_per_cycle: Constant
    """Per NOC link into a core; a core has two NOCs."""
    l1_bytes: Constant
    l1_reserved_bytes: Constant
    """Firmware, kernel code and overlay blobs (not for buffers)."""
    unpack_bytes_per_cycle: Constant
    """Per unpacker (srcA and srcB unpack in parallel)."""
    pack_bytes_per_cycle: Constant
    fpu_eltwise_cycles_per_tile: Constant
    """add / subtract / datacopy / max reduce of one tile (multiply: per fidelity pass)."""
    ublock_handshake_cycles: Constant
    """dest acquire/release and the LLK set-up around each ublock the math thread computes."""
    op_latency_cycles: Constant
    """Fixed start-up of an op on its cores (kernel launch, first tile through the pipes)."""


_KIB = 1024
_MIB = 1024 * _KIB

COMMON = {
    "noc_bytes_per_cycle": Constant(32, ESTIMATE + ": a 256-bit NOC flit per cycle"),
    "unpack_bytes_per_cycle": Constant(64, ESTIMATE),
    "pack_bytes_per_cycle": Constant(64, ESTIMATE),
    "fpu_eltwise_cycles_per_tile": Constant(32, ESTIMATE),
    "ublock_handshake_cycles": Constant(64, ESTIMATE),
    "op_latency_cycles": Constant(2000, ESTIMATE),
    "l1_reserved_bytes": Constant(192 * _KIB, ESTIMATE),
}

ARCHS: Mapping[str, ArchConstants] = MappingProxyType({
    "grayskull": ArchConstants(
        clock_hz=Constant(1.2e9, ESTIMATE + ": e150 AI clock"),
        matmul_macs_per_cycle=Constant(
            1024, "derived from [HC24]: 276 TOPS FP8 / (120 cores x 2 x 1.2 GHz) = 958"
        ),
        dram_bytes_per_s=Constant(100e9, "[HC24]"),
        dram_channels=Constant(8, "[BB] netlists: DRAM channels 0-7"),
        l1_bytes=Constant(1 * _MIB, "[TM]"),
        **COMMON,
    ),
    "wormhole_b0": ArchConstants(
        clock_hz=Constant(1.0e9, "[WH] AI clock"),
        matmul_macs_per_cycle=Constant(
            2048, "derived: [HC24] 328 TOPS FP8 / (80 cores x 2 x 1 GHz) = 2050; [WH] 74 TFLOPS FP16 = "
            "72 cores x 2048 x 2 x 1 GHz / 4 HiFi4 passes"),
        dram_bytes_per_s=Constant(288e9, "[WH] n150 board"),
        dram_channels=Constant(6, "[WH] 192-bit GDDR6 bus: six 32-bit channels"),
        l1_bytes=Constant(1464 * _KIB, "[WH] 1.5 MB per core"),
        **COMMON,
    ),
    "blackhole": ArchConstants(
        clock_hz=Constant(1.3e9, "derived: [HC24] 745 TFLOPS 8-bit / (140 cores x 2048 x 2)"),
        matmul_macs_per_cycle=Constant(2048, "[HC24] (as Wormhole; 372 TFLOPS 16-bit is the HiFi2 half)"),
        dram_bytes_per_s=Constant(512e9, "[HC24]"),
        dram_channels=Constant(8, ESTIMATE + ": 8 GDDR6 channels"),
        l1_bytes=Constant(1464 * _KIB, "[TM] 1.5 MB per core"),
        **{**COMMON, "noc_bytes_per_cycle": Constant(64, ESTIMATE + ": a 512-bit NOC flit per cycle")},
    ),
})  # fmt: skip

SFPU_CYCLES_PER_TILE: Mapping[str, int] = MappingProxyType({
    "exp": 512, "log": 512, "sqrt": 384, "reciprocal": 512, "sigmoid": 640, "tanh": 640,
    "gelu": 640, "gelu_derivative": 768, "square": 128, "abs": 64, "sine": 640, "cosine": 640,
    "lrelu": 128, "power": 256, "relu": 64,
})  # fmt: skip
"""SFPU cycles for one 32x32 tile, ESTIMATE: the vector unit works 32 lanes at a time
(32 passes per tile), and a transcendental takes ~16-24 instructions per pass."""

SFPU_DEFAULT_CYCLES = 256
"""ESTIMATE for an SFPU op missing from the table."""


def arch_constants(arch: str) -> ArchConstants:
    """The constants of ``arch`` (``grayskull``, ``wormhole_b0``, ``blackhole``)."""
    return ARCHS[arch]


def table() -> str:
    """The constants of every architecture with their sources, one line each."""
    lines = []
    for arch, constants in ARCHS.items():
        for name, constant in vars(constants).items():
            lines.append(f"{arch:<12} {name:<30} {constant.value:<12g} {constant.source}")
    lines.extend(
        f"{'(all)':<12} sfpu {op:<25} {cycles:<12} {ESTIMATE}" for op, cycles in SFPU_CYCLES_PER_TILE.items()
    )
    lines.extend(
        f"{'(all)':<12} fidelity {name:<21} {phases:<12} {FIDELITY_SOURCES.get(name, '[DF]')}"
        for name, phases in FIDELITY_PHASES.items()
    )
    return "\n".join(lines)
