"""Data movement: ``dma_copy``, ``dma_transpose``, ``tensor_copy`` and ``memset``.

DMA moves HBM <-> SBUF, SBUF <-> SBUF and HBM <-> HBM; it cannot read or write PSUM.
``tensor_copy`` runs on a compute engine within SBUF/PSUM (the PSUM -> SBUF eviction),
bit-accurate for equal dtypes and through float32 otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nkigym_graph.nki_sim import isa_enums
from nkigym_graph.nki_sim.instruction import instruction
from nkigym_graph.nki_sim.mathops import MATH_OPS
from nkigym_graph.nki_sim.operands import (
    as_f32,
    engine_allows_psum,
    number,
    on_chip,
    same_layout,
    tensor_arg,
    uses,
    write,
)
from nkigym_graph.nki_sim.state import fail
from nkigym_graph.nki_sim.tensor import Tensor

_DMA_TRANSPOSES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def _squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


def _no_psum(*pairs: tuple[str, Tensor]) -> None:
    for role, tensor in pairs:
        if tensor.buffer.kind == "psum":
            fail("dma.psum", f"DMA cannot access PSUM ({role}); evict it with nisa.tensor_copy")


def dma_into(dst: Tensor, src: Tensor, rmw_op: Any = None) -> None:
    """Check and run ``dst = src`` (or ``dst += src``) on a DMA engine."""
    _no_psum(("dst", dst), ("src", src))
    if dst.data.size != src.data.size or _squeezed(dst.shape) != _squeezed(src.shape):
        fail("dma.shape", f"src {src.shape} and dst {dst.shape} differ in shape")
    if rmw_op is None:
        write(dst, src.data.reshape(dst.shape))
    elif rmw_op is MATH_OPS["add"]:
        write(dst, as_f32(dst) + as_f32(src).reshape(dst.shape))
    else:
        fail("dma.rmw_op", f"dst_rmw_op must be None or nl.add, got {rmw_op!r}")


@instruction("nisa.dma_copy")
def dma_copy(
    dst: Any,
    src: Any,
    dst_rmw_op: Any = None,
    oob_mode: Any = isa_enums.oob_mode.error,
    dge_mode: Any = isa_enums.dge_mode.unknown,
    unique_indices: bool = True,
    engine: Any = isa_enums.engine.unknown,
    name: Any = None,
) -> None:
    """Copy ``src`` to ``dst`` (cast to dst's dtype) through a DMA engine."""
    out, source = tensor_arg(dst, "dst"), tensor_arg(src, "src")
    uses(out, source)
    dma_into(out, source, dst_rmw_op)


@instruction("nisa.dma_transpose")
def dma_transpose(
    dst: Any,
    src: Any,
    axes: Any = None,
    dge_mode: Any = isa_enums.dge_mode.unknown,
    oob_mode: Any = isa_enums.oob_mode.error,
    name: Any = None,
) -> None:
    """Transpose through DMA: 2-D (1, 0), 3-D (2, 1, 0), 4-D (3, 1, 2, 0)."""
    out, source = tensor_arg(dst, "dst"), tensor_arg(src, "src")
    uses(out, source)
    _no_psum(("dst", out), ("src", source))
    perm = _DMA_TRANSPOSES.get(source.ndim)
    if perm is None or (axes is not None and tuple(axes) != perm):
        fail(
            "dma_transpose.axes",
            f"unsupported transpose of a {source.ndim}-D tensor with "
            f"axes={axes!r}; supported: {sorted(_DMA_TRANSPOSES.values())}",
        )
    expected = tuple(source.shape[a] for a in perm)
    if out.shape != expected:
        fail("dst.shape", f"dst {out.shape} must be {expected} for src {source.shape}")
    write(out, np.transpose(source.data, perm))


@instruction("nisa.tensor_copy")
def tensor_copy(dst: Any, src: Any, engine: Any = isa_enums.engine.unknown, name: Any = None) -> None:
    """Copy within SBUF/PSUM on a compute engine; same partitions and elements."""
    out, source = on_chip(dst, "dst"), on_chip(src, "src")
    uses(out, source)
    engine_allows_psum(engine, out, source)
    same_layout(source, out, "dst.shape", "src and dst")
    write(out, source.data if out.dtype == source.dtype else as_f32(source))


@instruction("nisa.memset")
def memset(dst: Any, value: Any, engine: Any = isa_enums.engine.unknown, name: Any = None) -> None:
    """Fill an SBUF/PSUM tile with a constant."""
    out = on_chip(dst, "dst")
    uses(out)
    engine_allows_psum(engine, out)
    write(out, np.asarray(number(value, "value")))
