"""Per-architecture choices of the emitted netlists: data formats, fidelity, DRAM channels.

The worker grid, NOC count, dest capacity and fused-op limits come from the target's
facts (``nkigym_graph.ir.targets``); these are the netlist settings the targets do not hold.
Grayskull has no Float32 accumulation, so its netlists compute in Float16_b (dest then
holds 8 tiles per ublock); Wormhole B0 and Blackhole use Float32 throughout (4 tiles),
except that an op with a reduce reading Float16 accumulates in Float16
(:meth:`Arch.op_acc_df`).
A bfloat16 (float16) program's queues and op data are Float16_b (Float16) on every arch;
those of any other dtype (float32, float64, fp8) are the arch's own format, Float32 or,
on Grayskull, Float16_b. ``df=`` asks for another data format (``Bfp8_b``: block
floating point, one exponent per 16 values) for queues and op data, accumulation staying
the arch's and intermediates (matmul partial sums) ``Float16_b``; a tensor an op writes
whose rows end inside a tile is stored in ``Float16_b`` too (``Arch.stored_df``). The
numpy evaluator stores values in these formats (``nkigym_graph.buda.quantize``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nkigym_graph.buda.arch import arch_target
from nkigym_graph.buda.rules.formats import EXP_A_FORMATS
from nkigym_graph.buda.rules.limits import dest_tiles
from nkigym_graph.ir.targets import Target

from .errors import BudaEmitError, BudaOptionError
from .shapes import TILE


@dataclass(frozen=True)
class Arch:
    """A Tenstorrent target with the netlist settings used for it."""

    target: Target
    df: str
    """Data format of queues, op inputs/outputs and intermediates."""
    acc_df: str
    math_fidelity: str
    dram_channels: int

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def intermed_df(self) -> str:
        """Data format of intermediates (a matmul's partial sums between its ``m_k`` steps,
        a fused op's intermediate buffers): ``df``, but 16-bit floating point with the same
        exponent width for a block format, whose shared exponents would otherwise round every
        partial sum again."""
        if self.df.startswith("Bfp"):
            return "Float16_b" if self.df.endswith("_b") else "Float16"
        return self.df

    def stored_df(self, shape: tuple[int, int]) -> str:
        """Data format of a tensor of ``shape`` (elements) written by an op: ``df``, but
        ``intermed_df`` for a block format when its rows end inside a tile. The tile's
        padding then shares exponent blocks with real values, and an op can fill it with
        huge values (a reciprocal or rsqrt of the zero padding gives inf or 1/sqrt(eps)),
        whose exponent would round the real values of the block to zero. (The host writes
        zeros there, so input queues keep ``df``.)

        >>> arch = get_arch("wormhole_b0", df="Bfp8_b")
        >>> arch.stored_df((64, 20)), arch.stored_df((64, 1)), arch.stored_df((64, 64))
        ('Float16_b', 'Float16_b', 'Bfp8_b')
        """
        if shape[1] % TILE and self.df != self.intermed_df:
            return self.intermed_df
        return self.df

    def op_acc_df(self, in_dfs: Sequence[str], reduces: bool) -> str:
        """Dest format of an op reading ``in_dfs``: ``acc_df``, but Float16 for an op with
        a reduce reading an exponent-a format (Float16) when ``acc_df`` is Float32, which
        the backend refuses (tenstorrent/budabackend#1464, rule ``formats.reduce_exp_a``).
        A 16-bit dest holds twice the tiles of a Float32 one, so blocks sized for
        :attr:`dest_tiles` fit it.

        >>> arch = get_arch("wormhole_b0", "float16")
        >>> arch.op_acc_df(["Float16"], reduces=True), arch.op_acc_df(["Float16"], reduces=False)
        ('Float16', 'Float32')
        """
        if reduces and self.acc_df == "Float32" and any(df in EXP_A_FORMATS for df in in_dfs):
            return "Float16"
        return self.acc_df

    @property
    def dest_tiles(self) -> int:
        """Tiles of one ublock that fit in dest with ``acc_df``."""
        return dest_tiles(self.target, self.acc_df)

    @property
    def worker_grid(self) -> tuple[int, int]:
        rows, cols = self.target.facts["grid"]
        return (int(rows), int(cols))

    @property
    def nocs(self) -> int:
        return int(self.target.facts["nocs"])


_SETTINGS: dict[str, tuple[str, str, str, int]] = {
    "grayskull": ("Float16_b", "Float16_b", "HiFi4", 8),
    "wormhole_b0": ("Float32", "Float32", "HiFi4", 6),
    "blackhole": ("Float32", "Float32", "HiFi4", 8),
}


DATA_FORMATS = {"bfloat16": "Float16_b", "float16": "Float16"}
"""Buda data formats of program dtypes narrower than float32 (float32 uses the arch's)."""
EMIT_FORMATS = ("Float32", "Float16_b", "Float16", "Bfp8_b")
"""Data formats ``df=`` may ask for (in any case: ``bfp8_b`` is ``Bfp8_b``)."""
_FORMAT_NAMES = {name.lower(): name for name in EMIT_FORMATS}


def get_arch(target: str | Target, dtype: str | None = None, df: str | None = None) -> Arch:
    """The netlist settings for a Tenstorrent architecture name or target; a program of
    ``dtype`` bfloat16 or float16 keeps it in queues and op data, ``df`` (one of
    :data:`EMIT_FORMATS`, in any case) overrides it (``acc_df`` is the arch's either way).

    >>> get_arch("wormhole_b0", df="bfp8_b").df
    'Bfp8_b'
    """
    try:
        resolved = arch_target(target)
    except Exception as err:  # NetlistError for names, or a Trainium target
        raise BudaEmitError(f"no Buda architecture for {target!r}: {err}") from None
    if resolved.name not in _SETTINGS:
        raise BudaEmitError(f"no netlist settings for architecture {resolved.name!r}")
    data, acc_df, fidelity, channels = _SETTINGS[resolved.name]
    if df is not None:
        spelled = _FORMAT_NAMES.get(df.lower()) if isinstance(df, str) else None
        if spelled is None:
            raise BudaOptionError("df", f"must be one of {', '.join(EMIT_FORMATS)} (in any case), got {df!r}")
        df = spelled
        if df == "Float32" and acc_df != "Float32":
            raise BudaOptionError(
                "df", f"is Float32, but {resolved.name} has no Float32 data path; use Float16_b or Bfp8_b"
            )
        return Arch(resolved, df, acc_df, fidelity, channels)
    return Arch(resolved, DATA_FORMATS.get(str(dtype), data), acc_df, fidelity, channels)
