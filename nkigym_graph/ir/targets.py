"""Hardware targets: the limits and facts that tiling, transforms, cost models and
backends read. Nothing else in the library hard-codes a tile size.

A target is data. ``op_limits[op][dim]`` is the largest size an operation accepts on
one of its named dimensions (``nc_matmul``: ``M``, ``K``, ``N``); ``tile_sizes`` are the
sizes tiling starts from; ``facts`` carries backend- and cost-model-specific numbers.

>>> TRN2.limit("nc_matmul", "N")
512
>>> resolve_target("wormhole_b0").facts["grid"]
(10, 8)
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from nkigym_graph.errors import PluginError
from nkigym_graph.ir.arguments import ErrorType, describe, require_int, require_type


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType({k: _frozen(v) if isinstance(v, Mapping) else v for k, v in mapping.items()})


@dataclass(frozen=True, eq=False)
class Target:
    """One accelerator core's limits. Compared and hashed by identity (targets are
    singletons); pickled by value and unpickled as the same target where this process
    has it (``unpickled_target``), so programs on a plugin's target reach workers."""

    name: str
    family: str
    """``"neuron"`` (AWS Trainium) or ``"tenstorrent"``."""
    partition_size: int
    """Largest dim 0 (partition dim) of an on-chip tile, and of one DMA / store tile."""
    tile_sizes: Mapping[str, int]
    """Initial tile size per axis role: ``partition``, ``M``, ``K``, ``N``, ``free``."""
    op_limits: Mapping[str, Mapping[str, int]]
    """Per op name, per dimension name, the largest size the hardware accepts."""
    sbuf_bytes_per_partition: int
    """On-chip scratchpad (SBUF, or L1 on Tenstorrent) usable bytes per partition."""
    psum_bytes_per_partition: int
    """Matmul accumulator (PSUM, or dest on Tenstorrent) bytes per partition."""
    facts: Mapping[str, Any] = field(default_factory=dict)
    """Backend and cost-model facts (clocks, bandwidths, grid, ...)."""
    hbm_bytes: int | None = None
    """Device memory (HBM on Trainium, DRAM on Tenstorrent) of one device in bytes: the
    most a program's parameters and outputs may hold together (None: not checked)."""

    def __post_init__(self) -> None:
        check_target_fields(self)
        object.__setattr__(self, "tile_sizes", _frozen(self.tile_sizes))
        object.__setattr__(self, "op_limits", _frozen(self.op_limits))
        object.__setattr__(self, "facts", _frozen(self.facts))
        _KNOWN[self.name] = self

    def __reduce__(self) -> tuple[Any, ...]:
        # by value (a worker process may not have the plugin that made it), unpickled as
        # the target of that name and those fields this process knows (``unpickled_target``)
        return (unpickled_target, (_field_values(self),))

    def limit(self, op_name: str, dim: str) -> int | None:
        """The largest size ``op_name`` accepts on ``dim``, or None if unbounded."""
        return self.op_limits.get(op_name, {}).get(dim)

    def __repr__(self) -> str:
        return f"Target({self.name})"


_KNOWN: weakref.WeakValueDictionary[str, Target] = weakref.WeakValueDictionary()
"""The last target built under each name (in this process): what an unpickled target
resolves to when its fields are the same."""


def _plain(value: Any) -> Any:
    """``value`` with its read-only mappings as dicts (which pickle and compare)."""
    return {k: _plain(v) for k, v in value.items()} if isinstance(value, Mapping) else value


def _field_values(target: Target) -> dict[str, Any]:
    return {f.name: _plain(getattr(target, f.name)) for f in fields(target)}


def unpickled_target(values: Mapping[str, Any]) -> Target:
    """The target a pickle holds: a built-in one, or the target of that name this
    process already has when its fields are the same (targets are singletons, compared
    by identity), else a new one built from ``values``."""
    name = values["name"]
    known = BUILTIN_TARGETS.get(name) or _KNOWN.get(name)
    if known is not None and _field_values(known) == values:
        return known
    return Target(**values)


def check_target_fields(target: Target) -> None:
    """``PluginError`` naming the target and the field unless every field is well formed:
    the sizes and byte counts integers >= 1, the mappings mappings.

    >>> Target("x", "neuron", -5, {}, {}, 1024, 1024)
    Traceback (most recent call last):
    ...
    nkigym_graph.errors.PluginError: Target 'x': partition_size must be an integer >= 1, got -5
    """
    name = target.name
    if not isinstance(name, str) or not name:
        raise PluginError(f"Target: name must be a non-empty string, got {describe(name)}")

    def error(message: str) -> PluginError:
        return PluginError(f"Target {name!r}: {message}")

    require_type(target.family, str, "family", error, "a string ('neuron', 'tenstorrent', ...)")
    for field_name in ("partition_size", "sbuf_bytes_per_partition", "psum_bytes_per_partition"):
        require_int(getattr(target, field_name), field_name, error, minimum=1)
    if target.hbm_bytes is not None:
        require_int(target.hbm_bytes, "hbm_bytes", error, minimum=1)
    _check_sizes(target.tile_sizes, "tile_sizes", error)
    require_type(target.op_limits, Mapping, "op_limits", error, "a mapping of op name to {dimension: size}")
    for op_name, limits in target.op_limits.items():
        _check_sizes(limits, f"op_limits[{op_name!r}]", error)
    require_type(target.facts, Mapping, "facts", error, "a mapping")


def _check_sizes(sizes: Any, field_name: str, error: ErrorType) -> None:
    """``sizes`` is a mapping of names to integers >= 1."""
    require_type(sizes, Mapping, field_name, error, "a mapping of name to size")
    for key, size in sizes.items():
        require_type(key, str, f"a key of {field_name}", error, "a string")
        require_int(size, f"{field_name}[{key!r}]", error, minimum=1)


_KIB = 1024
_GIB = 1024**3

TRN2 = Target(
    name="trn2",
    family="neuron",
    partition_size=128,
    tile_sizes={"partition": 128, "M": 128, "K": 128, "N": 128, "free": 128},
    op_limits={
        # seed 000 / 001 tables (Trn2, NeuronCore-v3); free dims of SBUF tiles are bounded by
        # the SBUF bytes per partition, checked by dtype size where the op is verified.
        "load": {"partition": 128},
        "store": {"partition": 128},
        "nc_matmul": {"M": 128, "K": 128, "N": 512},
        "nc_transpose": {"partition": 128, "free": 128},
        "activation": {"partition": 128},
        "activation_bias": {"partition": 128},
        "tensor_tensor": {"partition": 128},
        "tensor_row": {"partition": 128},
        "tensor_scalar": {"partition": 128},
        "tensor_column": {"partition": 128},
        "tensor_reduce": {"partition": 128},
    },
    sbuf_bytes_per_partition=192 * _KIB,
    psum_bytes_per_partition=16 * _KIB,
    facts={
        "core": "NeuronCore-v3",
        "psum_banks": 8,
        "psum_bank_bytes": 2 * _KIB,
        "sbuf_physical_bytes_per_partition": 224 * _KIB,
        "tensor_engine_hz": 2.4e9,
        "vector_engine_hz": 0.96e9,
        "scalar_engine_hz": 1.2e9,
        "peak_flops_bf16": 79e12,
        "peak_flops_fp32": 20e12,
        "dma_engines": 16,
        "dma_bytes_per_ns_per_engine": 23.0,
        "dma_fixed_seconds": 1.3e-6,
        "dma_dge_fixed_seconds": 0.6e-6,
        "dma_saturating_bytes_per_partition": 4 * _KIB,
        "dma_overhead_bound_bytes_per_partition": 256,
        "vector_fixed_cycles": 100,
        "matmul_min_moving_cycles": 64,
        "roofline_knee_flop_per_byte": 215.0,
    },
    hbm_bytes=96 * _GIB,  # one Trainium2 device: 4 stacks of 24 GiB
)

TRN1 = Target(
    name="trn1",
    family="neuron",
    partition_size=128,
    tile_sizes=TRN2.tile_sizes,
    op_limits=TRN2.op_limits,
    sbuf_bytes_per_partition=192 * _KIB,
    psum_bytes_per_partition=16 * _KIB,
    facts={**TRN2.facts, "core": "NeuronCore-v2", "sbuf_physical_bytes_per_partition": 192 * _KIB},
    hbm_bytes=32 * _GIB,  # one Trainium1 device
)


def _tenstorrent(name: str, grid: tuple[int, int], cb_limit: int, l1_kib: int, dram_gib: int) -> Target:
    tile = 32
    return Target(
        name=name,
        family="tenstorrent",
        partition_size=tile,
        # A netlist op takes whole tensors: a program's tile only bounds the per-core block
        # (ublock) of the result. Output columns (and a matmul's M) start at one 32x32 tile,
        # so search can grow the block; a contraction (K) and the rows of elementwise ops
        # start at 8 tiles (the dest capacity), which the netlist never splits further.
        tile_sizes={"partition": 8 * tile, "M": tile, "K": 8 * tile, "N": tile, "free": tile},
        # A block of tiles must fit in dest: 8 tiles with 16-bit accumulation, 4 with fp32.
        # Merges grow blocks up to these sizes.
        op_limits={
            "load": {"partition": 8 * tile},
            "store": {"partition": 8 * tile},
            "nc_matmul": {"M": 8 * tile, "K": 8 * tile, "N": 8 * tile},
            "nc_transpose": {"partition": tile, "free": tile},
            "activation": {"partition": 8 * tile},
            "activation_bias": {"partition": 8 * tile},
            "tensor_tensor": {"partition": 8 * tile},
            "tensor_row": {"partition": 8 * tile},
            "tensor_scalar": {"partition": 8 * tile},
            "tensor_column": {"partition": 8 * tile},
            "tensor_reduce": {"partition": 8 * tile},
        },
        sbuf_bytes_per_partition=l1_kib * _KIB // tile,
        psum_bytes_per_partition=8 * tile * 2,
        facts={
            "arch": name,
            "tile": (tile, tile),
            "dest_tiles_16bit": 8,
            "dest_tiles_32bit": 4,
            "grid": grid,
            "nocs": 2,
            "fused_max_intermediates": 8,
            "fused_max_inputs": 16,
            "circular_buffer_limit": cb_limit,
            "l1_bytes": l1_kib * _KIB,
            # the Buda backend lifts each weight of a stitched parameter as its own tensor
            "stitched_weights_apart": True,
        },
        hbm_bytes=dram_gib * _GIB,
    )


# device DRAM: Grayskull e150 8 GiB LPDDR4, Wormhole n150 12 GiB and Blackhole p150 32 GiB GDDR6
GRAYSKULL = _tenstorrent("grayskull", grid=(10, 12), cb_limit=32, l1_kib=1024, dram_gib=8)
WORMHOLE_B0 = _tenstorrent("wormhole_b0", grid=(10, 8), cb_limit=32, l1_kib=1464, dram_gib=12)
BLACKHOLE = _tenstorrent("blackhole", grid=(10, 14), cb_limit=64, l1_kib=1464, dram_gib=32)

BUILTIN_TARGETS: Mapping[str, Target] = MappingProxyType(
    {t.name: t for t in (TRN2, TRN1, GRAYSKULL, WORMHOLE_B0, BLACKHOLE)}
)


def resolve_target(target: str | Target, more: Callable[[], Mapping[str, Target]] | None = None) -> Target:
    """Pass a target through, or find one by name: a built-in one, else one of ``more()``
    (the targets plugins register, which ``nkigym_graph.get_target`` in the plugin layer
    passes; this layer knows the built-in ones only)."""
    if isinstance(target, Target):
        return target
    require_type(target, str, "target", PluginError, "a target name or a Target")
    key = target.lower()
    if key in BUILTIN_TARGETS:
        return BUILTIN_TARGETS[key]
    others = more() if more is not None else {}
    found = others.get(target, others.get(key))
    if found is not None:
        return found
    known = ", ".join(sorted({*BUILTIN_TARGETS, *others}))
    hint = (
        ""
        if more is not None
        else " (a plugin's target: pass the Target, or its name to nkigym_graph.get_target)"
    )
    raise PluginError(f"unknown target {target!r}; known targets: {known}{hint}")
