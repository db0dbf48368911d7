"""``nki.language`` functions: allocation, slicing, loop iterators, SPMD ids, tile sizes.

Loops (``range``, ``nl.affine_range``, ``nl.sequential_range``, ``nl.static_range``) run
in Python, unrolled, as the NKI compiler specialises them. The simulator runs one SPMD
program: ``nl.program_id`` is 0 and ``nl.num_programs`` 1.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from nkigym_graph.ir.targets import Target
from nkigym_graph.nki_sim.alloc import allocate
from nkigym_graph.nki_sim.instruction import instruction
from nkigym_graph.nki_sim.operands import number, tensor_arg, uses, write
from nkigym_graph.nki_sim.state import fail
from nkigym_graph.nki_sim.tensor import Tensor


@instruction("nl.ndarray")
def ndarray(shape: Any, dtype: Any, buffer: Any = None, name: Any = "", address: Any = None) -> Tensor:
    """A new, uninitialised tensor (reads as NaN until written)."""
    return allocate(shape, dtype, buffer, name)


@instruction("nl.zeros")
def zeros(shape: Any, dtype: Any, buffer: Any = None, name: Any = "") -> Tensor:
    """A new tensor filled with zeros (a memset: PSUM counts it as a non-matmul write)."""
    return allocate(shape, dtype, buffer, name, zero=True)


@instruction("nl.zeros_like")
def zeros_like(x: Any, dtype: Any = None, buffer: Any = None, name: Any = "") -> Tensor:
    source = tensor_arg(x, "x")
    return allocate(
        source.shape,
        source.dtype if dtype is None else dtype,
        source.buffer if buffer is None else buffer,
        name,
        zero=True,
    )


@instruction("nl.full")
def full(shape: Any, fill_value: Any, dtype: Any, buffer: Any = None, name: Any = "") -> Tensor:
    out = allocate(shape, dtype, buffer, name)
    uses(out)
    write(out, np.asarray(number(fill_value, "fill_value")))
    return out


@instruction("nl.ones")
def ones(shape: Any, dtype: Any, buffer: Any = None, name: Any = "") -> Tensor:
    out = allocate(shape, dtype, buffer, name)
    uses(out)
    write(out, np.asarray(1))
    return out


def ds(start: Any, size: Any) -> slice:
    """``nl.ds(start, size)``: the slice ``start:start + size``."""
    try:
        lo, n = operator.index(start), operator.index(size)
    except TypeError:
        fail("index.type", f"nl.ds({start!r}, {size!r}) needs int start and size", instruction="nl.ds")
    if n <= 0:
        fail("index.empty", f"nl.ds({lo}, {n}) selects nothing", instruction="nl.ds")
    return slice(lo, lo + n)


def affine_range(start: int, stop: int | None = None, step: int = 1) -> range:
    """Loop iterator (unrolled)."""
    return range(start) if stop is None else range(start, stop, step)


sequential_range = affine_range
static_range = affine_range


def program_id(axis: int = 0) -> int:
    return 0


def num_programs(axes: Any = None) -> int:
    return 1


def program_ndim() -> int:
    return 0


def device_print(print_prefix: Any, tensor: Any) -> None:
    """Print a tensor's values (host-side here)."""
    values = tensor.data if isinstance(tensor, Tensor) else tensor
    print(print_prefix, values)


class NKIObject:
    """Base class kernels may use for their own configuration objects."""


def tile_size_for(target: Target) -> type:
    """The ``nl.tile_size`` constants of ``target``."""
    bank = int(target.facts.get("psum_bank_bytes", 2048))
    banks = int(target.facts.get("psum_banks", 8))
    sbuf = target.sbuf_bytes_per_partition
    return type(
        "tile_size",
        (),
        {
            "__doc__": f"Hardware tile size constants of {target.name}.",
            "pmax": target.partition_size,
            "gemm_stationary_fmax": target.limit("nc_matmul", "M") or 128,
            "gemm_moving_fmax": target.limit("nc_matmul", "N") or 512,
            "psum_fmax": bank // 4,
            "psum_bank_fmax": bank // 4,
            "psum_bank_fmax_bytes": bank,
            "psum_fmax_bytes": bank,
            "psum_num_banks": banks,
            "sbuf_fmax": sbuf // 4,
            "sbuf_fmax_bytes": sbuf,
            "total_available_sbuf_size": sbuf,
            "bn_stats_fmax": 512,
        },
    )
