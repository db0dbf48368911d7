"""``nki.isa`` configuration enums (engine, reduce_cmd, dge_mode, ...).

Only ``engine.gpsimd`` (no PSUM access), ``engine.tensor`` / ``engine.vector`` (which
engine runs ``nc_transpose``) and ``reduce_cmd`` change what the simulator does; the
others are accepted and ignored, as they only change performance.
"""

from __future__ import annotations

from enum import Enum


class engine(Enum):
    unknown = "unknown"
    tensor = "tensor"
    vector = "vector"
    scalar = "scalar"
    gpsimd = "gpsimd"
    sync = "sync"


class reduce_cmd(Enum):
    idle = "idle"
    reset = "reset"
    reduce = "reduce"
    reset_reduce = "reset_reduce"


class dge_mode(Enum):
    unknown = "unknown"
    none = "none"
    swdge = "swdge"
    hwdge = "hwdge"


class oob_mode(Enum):
    error = "error"
    skip = "skip"


class matmul_perf_mode(Enum):
    none = "none"
    double_row = "double_row"


class nc_version(Enum):
    gen2 = "gen2"
    gen3 = "gen3"
    gen4 = "gen4"


ENGINE_ALIASES = {
    "tensor_engine": engine.tensor,
    "vector_engine": engine.vector,
    "scalar_engine": engine.scalar,
    "gpsimd_engine": engine.gpsimd,
    "unknown_engine": engine.unknown,
}
"""Older ``nisa.*_engine`` constants."""
