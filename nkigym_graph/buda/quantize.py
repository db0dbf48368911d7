"""What storing a tensor in a Buda data format does to its values (for the evaluator).

- ``Float32`` / ``Tf32``: float32 rounding; ``Float16``: float16; ``Float16_b``: bfloat16
  (round to nearest even).
- ``Bfp8_b`` (``Bfp4_b``, ``Bfp2_b``): block floating point as Tenstorrent documents it
  (pybuda "Data Formats and Math Fidelity"): every 16 consecutive values of a tile row
  (a row of one 16x16 face) share the largest 8-bit exponent among them; each value keeps
  a sign and a 7-bit (3-bit, 1-bit) magnitude, its mantissa with the hidden 1 made
  explicit and shifted right by its exponent's distance from the shared one. Conversion
  from float32 as the host does it (tt-metal ``convert_u32_to_bfp8``): the shifted 24-bit
  mantissa is rounded half up to the kept bits and saturates at the largest magnitude;
  a block's small values lose their low bits, or vanish. ``Bfp8`` (``Bfp4``, ``Bfp2``):
  the same with the exponent rebiased to 5 bits (saturating).
- inf and nan in a block format: an ``_b`` block holding one gets the shared exponent 255,
  and unpacking it (tt-metal ``unpack_bfp8_tiles_into_float_vec``) gives back float32 bits
  with exponent 255: inf for the inf (its kept magnitude is the hidden 1 alone), nan for a
  nan whose top mantissa bits survive the rounding (any quiet nan, except in ``Bfp2_b``,
  whose one bit keeps only the hidden 1: inf); the block's other values are rounded to
  that exponent (most vanish). The 5-bit formats' host conversion would saturate inf and
  nan to the largest magnitude like any value too large; what the device's packer does is
  not documented, so here inf stays inf and nan stays nan (a finite stand-in would hide a
  non-finite result), and the block's other values are rounded against the largest
  exponent, as the host's saturation would.
- integer formats and anything else: unchanged (not modelled).

>>> import numpy as np
>>> x = np.array([[1.0, 3.0 / 1024, 0.1] + [0.0] * 13])
>>> quantize(x, "Bfp8_b")[0, :3].tolist()  # shared exponent of 1.0: steps of 1/64
[1.0, 0.0, 0.09375]
>>> float(quantize(np.array([[1 + 2**-9] + [0.0] * 15]), "Float16_b")[0, 0])
1.0
"""

from __future__ import annotations

from collections.abc import Mapping

import ml_dtypes
import numpy as np

BLOCK = 16
"""Values sharing one exponent."""
BFP_MAGNITUDE_BITS: Mapping[str, tuple[int, bool]] = {
    "Bfp8_b": (7, False), "Bfp4_b": (3, False), "Bfp2_b": (1, False),
    "Bfp8": (7, True), "Bfp4": (3, True), "Bfp2": (1, True),
}  # fmt: skip
"""Magnitude bits per value, and whether the shared exponent is the 5-bit ("a") kind."""
FLOAT_DTYPES: Mapping[str, np.dtype] = {
    "Float32": np.dtype(np.float32),
    "Tf32": np.dtype(np.float32),
    "Float16": np.dtype(np.float16),
    "Float16_b": np.dtype(ml_dtypes.bfloat16),
}


def quantize(array: np.ndarray, df: str | None) -> np.ndarray:
    """``array`` (float64, last dim a multiple of 16 for block formats) as stored in ``df``."""
    if df is None:
        return np.asarray(array, dtype=np.float64)
    if df in FLOAT_DTYPES:
        with np.errstate(over="ignore"):  # beyond the format's range is inf, as stored
            return np.asarray(array).astype(FLOAT_DTYPES[df]).astype(np.float64)
    if df in BFP_MAGNITUDE_BITS:
        bits, exp_a = BFP_MAGNITUDE_BITS[df]
        return block_float(np.asarray(array, dtype=np.float64), bits, exp_a)
    return np.asarray(array, dtype=np.float64)


def block_float(array: np.ndarray, bits: int, exp_a: bool = False) -> np.ndarray:
    """Block floating point with ``bits`` magnitude bits per value (see the module docstring)."""
    shape = array.shape
    if shape[-1] % BLOCK:
        raise ValueError(
            f"block floating point needs rows of whole {BLOCK}-value blocks, got {shape[-1]} columns"
        )
    single = array.astype(np.float32).reshape(*shape[:-1], shape[-1] // BLOCK, BLOCK)
    raw = single.view(np.uint32).astype(np.int64)
    zero = (raw & 0x7FFFFFFF) == 0
    sign = np.where(raw >> 31 == 1, -1.0, 1.0)
    exponent = (raw >> 23) & 0xFF
    fraction = raw & 0x7FFFFF
    if exp_a:  # 5-bit exponent (bias 15), saturating at both ends as the host does
        exponent = exponent - 127 + 15
        fraction = np.where(exponent > 31, 0x7FFFFF, np.where(exponent < 0, 0, fraction))
        exponent = np.clip(exponent, 0, 31)
    mantissa = fraction | 0x800000
    exponent = np.where(zero, 0, exponent)
    shared = exponent.max(axis=-1, keepdims=True)
    shifted = np.right_shift(mantissa, np.minimum(shared - exponent, 63))
    drop = 24 - bits
    kept = np.minimum((shifted + (1 << (drop - 1))) >> drop, (1 << bits) - 1)
    bias = 15 if exp_a else 127
    value = sign * kept * np.exp2((shared - bias - (bits - 1)).astype(np.float64))
    value = np.where(zero | (kept == 0), 0.0, value)
    if exp_a:
        value = np.where(np.isfinite(single), value, single)
    else:  # unpacked with exponent 255: inf when only the hidden 1 is kept, else nan
        top = 1 << (bits - 1)
        special = (shared == 255) & (kept >= top)
        value = np.where(special, np.where(kept == top, sign * np.inf, np.nan), value)
    return value.reshape(shape)
