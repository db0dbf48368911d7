"""Buda data formats: the names a netlist may use for ``df``, ``in_df``, ``out_df``,
``acc_df`` and ``intermed_df``, with the bytes of one tile in each."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

TILE_BYTES: Mapping[str, int] = MappingProxyType({
    "Float32": 4128, "Tf32": 4128, "Int32": 4128, "RawUInt32": 4128,
    "Float16": 2080, "Float16_b": 2080, "UInt16": 2080, "RawUInt16": 2080,
    "Bfp8": 1120, "Bfp8_b": 1120, "Int8": 1056, "Lf8": 1056, "RawUInt8": 1056,
    "Bfp4": 608, "Bfp4_b": 608, "Bfp2": 352, "Bfp2_b": 352,
})  # fmt: skip
"""Bytes of one 32x32 tile with its 32-byte header (and Bfp exponent section)."""

DATA_FORMATS = frozenset(TILE_BYTES) - {"Tf32"}
"""The names the backend's netlist parser accepts (it has no ``Tf32`` spelling)."""
