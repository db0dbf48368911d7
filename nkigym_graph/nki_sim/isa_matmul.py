"""Tensor Engine instructions: ``nisa.nc_matmul`` and ``nisa.nc_transpose``.

A matmul's dst must fit one 2 KiB PSUM bank per partition (N <= 512 fp32), counted from
the start of its PSUM tensor.

PSUM accumulation (``accumulate=None``), per PSUM element: the first matmul write
overwrites, later matmul writes accumulate. ``accumulate=False`` always overwrites,
``accumulate=True`` always accumulates. Accumulating onto an element whose last writer
was not a matmul (memset, tensor_copy, activation, ...) is undefined on NeuronCore-v2/v3
and fails ``matmul.accumulate_non_matmul``.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from nkigym_graph.nki_sim import isa_enums
from nkigym_graph.nki_sim.dtypes import MATMUL_INPUT_DTYPES, dtype_name
from nkigym_graph.nki_sim.instruction import instruction
from nkigym_graph.nki_sim.operands import as_f32, layout, on_chip, uses, write
from nkigym_graph.nki_sim.state import current, fail
from nkigym_graph.nki_sim.tensor import MATMUL, MIXED, Tensor, address


def _limit(dim: str, default: int) -> int:
    found = current().target.limit("nc_matmul", dim)
    return default if found is None else found


def _fail_accumulate() -> NoReturn:
    fail(
        "matmul.accumulate_non_matmul",
        "accumulating onto PSUM last written by a non-matmul instruction (memset, "
        "tensor_copy, ...) is undefined on NeuronCore-v2/v3; start the group with "
        "accumulate=False or use a fresh PSUM tile",
    )


def _check_bank(dst: Tensor) -> None:
    """The dst row segment must lie in one PSUM bank (allocations start bank-aligned)."""
    bank = int(current().target.facts.get("psum_bank_bytes", 2048))
    data, owner = dst.data, dst.storage.values
    row_bytes = owner.nbytes // owner.shape[0]
    start = (address(data) - address(owner)) % row_bytes
    span = data.itemsize + sum((n - 1) * st for n, st in zip(data.shape[1:], data.strides[1:], strict=True))
    if start // bank != (start + span - 1) // bank:
        fail(
            "matmul.psum_bank",
            f"dst {dst.shape} covers bytes {start}..{start + span - 1} of "
            f"its PSUM partition row, crossing a {bank}-byte bank boundary",
        )


def matmul_into(
    dst: Tensor, stationary: Tensor, moving: Tensor, accumulate: Any, transpose: bool = False
) -> None:
    """Check and run ``dst[M, N] (+)= stationary[K, M].T @ moving[K, N]``; with
    ``transpose`` (``is_transpose=True``) dst keeps the input dtype and is overwritten."""
    for role, t in (("stationary", stationary), ("moving", moving)):
        if t.buffer.kind != "sbuf":
            fail("matmul.input_buffer", f"{role} must be in SBUF, not {t.buffer.label}")
        if t.dtype not in MATMUL_INPUT_DTYPES:
            fail(
                "matmul.input_dtype",
                f"{role} dtype {dtype_name(t.dtype)} is not one of fp8/bf16/fp16/tf32/fp32",
            )
    if dst.buffer.kind != "psum":
        fail("matmul.dst_buffer", f"dst must be in PSUM, not {dst.buffer.label}")
    if transpose:
        if dst.dtype != stationary.dtype:
            fail(
                "transpose.dtype",
                f"is_transpose: dst dtype {dtype_name(dst.dtype)} != "
                f"stationary dtype {dtype_name(stationary.dtype)}",
            )
    elif dst.dtype != np.float32:
        fail(
            "matmul.dst_dtype",
            f"dst dtype {dtype_name(dst.dtype)}: nc_matmul writes float32 "
            f"PSUM on {current().target.facts.get('core', current().target.name)}",
        )
    k, m = layout(stationary)
    k_moving, n = layout(moving)
    if k != k_moving:
        fail(
            "matmul.k_mismatch",
            f"stationary K={k} (shape {stationary.shape}) != moving K={k_moving} (shape {moving.shape})",
        )
    for rule, dim, size, role in (
        ("matmul.k_limit", "K", k, "contraction"),
        ("matmul.m_limit", "M", m, "stationary free"),
        ("matmul.n_limit", "N", n, "moving free"),
    ):
        limit = _limit(dim, size)
        if size > limit:
            fail(rule, f"{role} size {dim}={size} > {limit}")
    if layout(dst) != (m, n):
        fail("matmul.dst_shape", f"dst {dst.shape} must be [M={m}, N={n}]")
    _check_bank(dst)
    product = as_f32(stationary).reshape(k, m).T @ as_f32(moving).reshape(k, n)
    if transpose:
        write(dst, product)
        return
    out = dst.data
    if not out.flags.writeable:
        fail("operand.readonly", f"dst {dst.shape} is a read-only view")
    product = product.reshape(out.shape)
    state = dst.psum_state
    assert state is not None
    if accumulate is False:
        out[...] = product
    elif accumulate is True:
        if int(state.max()) >= MIXED:
            _fail_accumulate()
        out += product
    else:
        lo, hi = int(state.min()), int(state.max())
        if lo == hi:
            if lo == MIXED:
                _fail_accumulate()
            if lo == MATMUL:
                out += product
            else:
                out[...] = product
        else:
            if hi >= MIXED and bool((state == MIXED).any()):
                _fail_accumulate()
            accumulating = state == MATMUL
            np.copyto(out, np.where(accumulating, out + product, product))
    state[...] = MATMUL


@instruction("nisa.nc_matmul")
def nc_matmul(
    dst: Any,
    stationary: Any,
    moving: Any,
    is_stationary_onezero: bool = False,
    is_moving_onezero: bool = False,
    is_transpose: bool = False,
    accumulate: bool | None = None,
    tile_position: Any = (),
    tile_size: Any = (),
    perf_mode: Any = isa_enums.matmul_perf_mode.none,
    name: Any = None,
) -> None:
    """``dst = stationary.T @ moving`` on the Tensor Engine (see module docstring)."""
    out = on_chip(dst, "dst")
    stat = on_chip(stationary, "stationary")
    mov = on_chip(moving, "moving")
    uses(out, stat, mov)
    if accumulate not in (None, True, False):
        fail("bad_arguments", f"accumulate must be None, True or False, got {accumulate!r}")
    matmul_into(out, stat, mov, accumulate, transpose=bool(is_transpose))


def transpose_into(dst: Tensor, data: Tensor, engine_choice: Any) -> None:
    """Check and run ``dst = data.T`` (free dims flattened), bit-accurate."""
    p, f = layout(data)
    tensor_ok = data.buffer.kind == "sbuf" and dst.buffer.kind == "psum"
    route = f"{data.buffer.label} -> {dst.buffer.label}"
    if engine_choice is isa_enums.engine.tensor or (
        engine_choice is not isa_enums.engine.vector and tensor_ok
    ):
        if not tensor_ok:
            fail("transpose.buffer", f"the Tensor Engine transposes SBUF -> PSUM, not {route}")
        target = current().target
        p_max = target.limit("nc_transpose", "partition") or 128
        f_max = target.limit("nc_transpose", "free") or 128
        if p > p_max or f > f_max:
            fail("transpose.size", f"Tensor Engine transposes at most {p_max}x{f_max}; data is {p}x{f}")
    elif p > 32 or f > 32:
        rule = "transpose.size" if engine_choice is isa_enums.engine.vector else "transpose.buffer"
        fail(
            rule,
            f"{route} {p}x{f}: the Vector Engine transposes at most 32x32 and the "
            "Tensor Engine only SBUF -> PSUM",
        )
    if dst.dtype != data.dtype:
        fail("transpose.dtype", f"dst dtype {dtype_name(dst.dtype)} != data dtype {dtype_name(data.dtype)}")
    if layout(dst) != (f, p):
        fail("dst.shape", f"dst {dst.shape} must be [{f}, {p}] for data {data.shape}")
    write(dst, data.data.reshape(p, f).T)


@instruction("nisa.nc_transpose")
def nc_transpose(dst: Any, data: Any, engine: Any = isa_enums.engine.unknown, name: Any = None) -> None:
    """Partition <-> free transpose on the Tensor Engine (SBUF -> PSUM, <= 128x128) or the
    Vector Engine (<= 32x32)."""
    out = on_chip(dst, "dst")
    src = on_chip(data, "data")
    uses(out, src)
    transpose_into(out, src, engine)
