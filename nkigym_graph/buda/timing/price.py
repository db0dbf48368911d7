"""The modeled time of a Buda netlist on a Tenstorrent chip (constants: :mod:`.constants`).

Each graph op runs on its grid of Tensix cores; every core does the same share. On a
core three threads work in parallel on each ublock (the netlist's unit of work): the
unpacker copies operand tiles from L1 into the FPU's source registers, the math engine
(FPU, or SFPU for ``exp``, ``gelu`` ...) computes into dest, the packer copies dest back
to L1; so a core takes the longest of the three, plus a handshake per ublock (dest
acquire and release). A matmul with ublock ``[rt, ct]`` and ``u_kt`` unpacks ``rt*u_kt``
tiles of input 0 and ``u_kt*ct`` of input 1 for ``rt*ct*u_kt`` tile products, so larger
ublocks reuse what they unpack; with ``m_k > 1`` its partial sums go through an
intermediate buffer (packed, and unpacked again) between the ``m_k`` blocks. Tile products
cost one pass through the multiplier per math-fidelity phase. A fused op runs its sub-ops
one after another on the same engines.

Operands reach a core over the two NOCs: matmul input 0 is multicast along a row of
cores and input 1 down a column (each core receives its rows / columns of them), other
inputs are split among the cores; DRAM queues are read once (multicast shares them) and
each DRAM channel moves its queues' bytes at its share of the chip's bandwidth. An op
takes ``max(core, NOC) + a fixed start-up``. The ops of a graph stream into each other:
an op starts when the first output block (ublock) of each op it reads is out, and ends
no sooner than one block after them. A graph takes the longest of that pipeline and its
DRAM traffic; a program, the graphs it runs.

Per core, L1 holds each op's buffers: input buffers (two ublocks; a matmul's input 1
keeps its whole column block for reuse), the output (``buf_size_mb`` mblocks) and the
intermediates; more than the L1 left for buffers makes the netlist infeasible.

Everything here is modeled, not measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from nkigym_graph.buda.formats import TILE_BYTES
from nkigym_graph.buda.model import Dims, FusedOp, NetlistOp, Queue, SubOp
from nkigym_graph.buda.netlist import Netlist
from nkigym_graph.buda.optypes import SFPU
from nkigym_graph.buda.program import graph_runs
from nkigym_graph.buda.timing.constants import (
    FIDELITY_PHASES,
    SFPU_CYCLES_PER_TILE,
    SFPU_DEFAULT_CYCLES,
    TILE_MACS,
    ArchConstants,
    arch_constants,
)
from nkigym_graph.buda.tms import Tm
from nkigym_graph.ir.targets import Target

DEFAULT_DF = "Float16_b"


@dataclass
class Engines:
    """Cycles one core spends per engine (and handshakes), and the products it computes."""

    unpack_a: float = 0.0
    unpack_b: float = 0.0
    math: float = 0.0
    pack: float = 0.0
    handshake: float = 0.0
    tile_products: int = 0

    def add(self, other: Engines) -> None:
        self.unpack_a += other.unpack_a
        self.unpack_b += other.unpack_b
        self.math += other.math
        self.pack += other.pack
        self.handshake += other.handshake
        self.tile_products += other.tile_products

    @property
    def unpack(self) -> float:
        return max(self.unpack_a, self.unpack_b)

    @property
    def cycles(self) -> float:
        return max(self.unpack, self.math, self.pack) + self.handshake


@dataclass(frozen=True)
class OpPrice:
    """One graph op, per core: engine cycles, NOC cycles, and the seconds they make."""

    name: str
    type: str
    cores: int
    seconds: float
    engines: Engines
    noc_cycles: float
    blocks: int
    """Output ublocks per core: the pipeline's unit."""
    l1_bytes: int
    """Buffers per core."""
    flops: int


@dataclass(frozen=True)
class NetlistPrice:
    """The modeled run of a netlist (see the module docstring)."""

    arch: str
    seconds: float
    ops: tuple[OpPrice, ...]
    dram_bytes: int
    dram_seconds: float
    flops: int
    peak_flops: float
    l1_capacity: int
    dest_bytes: int
    peak_l1_bytes: int
    reasons: tuple[str, ...] = field(default=())

    @property
    def feasible(self) -> bool:
        return not self.reasons


def _tile_bytes(df: str | None) -> int:
    return TILE_BYTES.get(df or DEFAULT_DF, TILE_BYTES[DEFAULT_DF])


def _shape_after(shape: tuple[int, int, int], tms: tuple[Tm, ...]) -> tuple[int, int, int]:
    """``(t, rows, cols)`` in tiles after the TMs (shapes only)."""
    t, r, c = shape
    for tm in tms:
        n = int(tm.factor or 1)
        if tm.name == "broadcast":
            t, r, c = (t * n, r, c) if tm.dim == "z" else (t, r * n, c) if tm.dim == "r" else (t, r, c * n)
        elif tm.name == "transpose":
            r, c = c, r
        elif tm.name == "hslice":
            t, c = t * n, max(1, c // n)
        elif tm.name == "hstack":
            t, c = max(1, t // n), c * n
        elif tm.name == "vslice":
            t, r = t * n, max(1, r // n)
        elif tm.name == "vstack":
            t, r = max(1, t // n), r * n
    return t, r, c


def _tiles(source: Queue | NetlistOp) -> tuple[int, int, int]:
    t, rows, cols = source.shape
    return t, rows // 32, cols // 32


class _Pricer:
    def __init__(self, netlist: Netlist, target: Target) -> None:
        self.netlist = netlist
        self.target = target
        self.k: ArchConstants = arch_constants(target.name)
        self.clock = self.k.clock_hz.value
        self.macs = self.k.matmul_macs_per_cycle.value

    # -- engines ----------------------------------------------------------------------
    def _unpack(self, tiles: float, df: str | None) -> float:
        return tiles * _tile_bytes(df) / self.k.unpack_bytes_per_cycle.value

    def _pack(self, tiles: float, df: str | None) -> float:
        return tiles * _tile_bytes(df) / self.k.pack_bytes_per_cycle.value

    def matmul(
        self, dims: Dims, t: int, inner: tuple[int, int], dfs: tuple[str | None, str | None],
        out_df: str | None, partial_df: str | None, phases: int,
    ) -> Engines:  # fmt: skip
        (mb_m, mb_n), (rt, ct) = dims.mblock, dims.ublock
        m_k, u_kt = inner
        ublocks = mb_m * mb_n * t
        steps = ublocks * m_k
        products = steps * rt * ct * u_kt
        reloads = ublocks * (m_k - 1) * rt * ct
        return Engines(
            unpack_a=self._unpack(steps * rt * u_kt, dfs[0]),
            unpack_b=self._unpack(steps * u_kt * ct, dfs[1]) + self._unpack(reloads, partial_df),
            math=products * (TILE_MACS / self.macs) * phases,
            pack=self._pack(reloads, partial_df) + self._pack(ublocks * rt * ct, out_df),
            handshake=steps * self.k.ublock_handshake_cycles.value,
            tile_products=products,
        )

    def elementwise(
        self, kind: str, dims: Dims, t: int, in_dfs: tuple[str | None, ...], out_df: str | None,
        phases: int, in_tiles: float | None = None,
    ) -> Engines:  # fmt: skip
        out_tiles = dims.rows * dims.cols * t
        read = out_tiles if in_tiles is None else in_tiles
        per_tile = self.k.fpu_eltwise_cycles_per_tile.value
        if kind == "multiply":
            per_tile *= phases
        elif kind in SFPU or kind not in ("add", "subtract", "maximum", "datacopy", "nop", "reduce"):
            per_tile += SFPU_CYCLES_PER_TILE.get(kind, SFPU_DEFAULT_CYCLES)
        unpacked = [self._unpack(read, df) for df in in_dfs if df is not None]
        return Engines(
            unpack_a=unpacked[0] if unpacked else 0.0,
            unpack_b=unpacked[1] if len(unpacked) > 1 else 0.0,
            math=read * per_tile,
            pack=self._pack(out_tiles, out_df) if out_df is not None else 0.0,
            handshake=dims.mblock[0] * dims.mblock[1] * t * self.k.ublock_handshake_cycles.value,
        )

    # -- ops --------------------------------------------------------------------------
    def _inner(self, attributes: Mapping[object, object], dims: Dims) -> tuple[int, int]:
        m_k, u_kt = attributes.get("m_k"), attributes.get("u_kt")
        if isinstance(m_k, int) and isinstance(u_kt, int):
            return m_k, u_kt
        return 1, dims.cols  # a netlist without them is rejected by the checker

    def _plain(self, op: NetlistOp, phases: int) -> Engines:
        dims, t = op.dims, op.t
        if op.type == "matmul":
            dfs = (op.in_df[0] if op.in_df else None, op.in_df[1] if len(op.in_df) > 1 else None)
            return self.matmul(
                dims, t, self._inner(op.attributes, dims), dfs, op.out_df, op.intermed_df, phases
            )
        in_dfs = tuple(op.in_df) or (DEFAULT_DF,) * len(op.inputs)
        in_tiles = None
        if op.type == "reduce":
            m_k, u_kt = self._inner(op.attributes, dims)
            in_tiles = dims.rows * dims.cols * t * m_k * u_kt
        return self.elementwise(op.type, dims, t, in_dfs, op.out_df, phases, in_tiles)

    def _operand_df(self, op: NetlistOp, name: str) -> str | None:
        """Data format an operand is unpacked from (None: dest, nothing to unpack)."""
        if name == "dest":
            return None
        if name.startswith("input"):
            index = int(name[5:])
            return op.in_df[index] if index < len(op.in_df) else DEFAULT_DF
        return op.intermed_df

    def _output_df(self, op: NetlistOp, sub: SubOp) -> str | None:
        if sub.output == "dest":
            return None
        return op.out_df if sub.output == "output" else op.intermed_df

    def _fused(self, op: NetlistOp, fused: FusedOp, phases: int) -> Engines:
        total = Engines()
        for _, _, sub in fused.sub_ops():
            dfs = tuple(self._operand_df(op, name) for name in sub.inputs)
            out_df = self._output_df(op, sub)
            if sub.is_matmul:
                inner = sub.inner or (1, sub.dims.cols)
                pair = (dfs[0] if dfs else None, dfs[1] if len(dfs) > 1 else None)
                part = self.matmul(sub.dims, op.t, inner, pair, out_df, op.intermed_df, phases)
            else:
                in_tiles = None
                if sub.is_reduce:
                    m_k, u_kt = sub.inner or (1, 1)
                    in_tiles = sub.dims.rows * sub.dims.cols * op.t * m_k * u_kt
                part = self.elementwise(sub.type, sub.dims, op.t, dfs, out_df, phases, in_tiles)
            total.add(part)
        return total

    def _matmul_reads(self, op: NetlistOp, fused: FusedOp | None) -> dict[int, tuple[int, Dims, int]]:
        """``input index -> (position, dims, K tiles)`` of inputs read by a matmul."""
        if fused is None:
            if op.type != "matmul":
                return {}
            m_k, u_kt = self._inner(op.attributes, op.dims)
            return {0: (0, op.dims, m_k * u_kt), 1: (1, op.dims, m_k * u_kt)}
        reads: dict[int, tuple[int, Dims, int]] = {}
        for _, _, sub in fused.sub_ops():
            if not sub.is_matmul:
                continue
            m_k, u_kt = sub.inner or (1, sub.dims.cols)
            for position, name in enumerate(sub.inputs[:2]):
                if name.startswith("input"):
                    reads.setdefault(int(name[5:]), (position, sub.dims, m_k * u_kt))
        return reads

    def _input_tiles_per_core(self, op: NetlistOp, fused: FusedOp | None) -> list[tuple[float, str | None]]:
        """``(tiles, df)`` each core receives of each input."""
        rows, cols = op.cores
        cores = rows * cols
        reads = self._matmul_reads(op, fused)
        out: list[tuple[float, str | None]] = []
        for index, name in enumerate(op.inputs):
            df = op.in_df[index] if index < len(op.in_df) else DEFAULT_DF
            source = self.netlist.producer(name)
            if index in reads:
                position, dims, k_tiles = reads[index]
                span = dims.rows if position == 0 else dims.cols
                out.append((span * k_tiles * op.t, df))
            elif source is not None:
                t, r, c = _shape_after(_tiles(source), op.input_tms(index))
                out.append((t * r * c / cores, df))
        return out

    def _l1(self, op: NetlistOp, fused: FusedOp | None) -> int:
        """Bytes of this op's buffers on one core."""
        out = op.spec.get("buf_size_mb", 2)
        mblock_tiles = op.dims.rows * op.dims.cols
        total = int(out if isinstance(out, int) else 2) * mblock_tiles * _tile_bytes(op.out_df)
        reads = self._matmul_reads(op, fused)
        ublock = op.dims.ublock_tiles
        for index in range(len(op.inputs)):
            df = op.in_df[index] if index < len(op.in_df) else DEFAULT_DF
            if index in reads:
                position, dims, k_tiles = reads[index]
                tiles = k_tiles * dims.cols if position == 1 else 2 * dims.ublock[0] * k_tiles
            else:
                tiles = 2 * ublock
            total += tiles * _tile_bytes(df)
        if fused is not None:
            largest: dict[str, int] = {}
            for _, _, sub in fused.sub_ops():
                if sub.output.startswith("intermed"):
                    largest[sub.output] = max(largest.get(sub.output, 0), sub.dims.ublock_tiles)
            total += sum(2 * tiles for tiles in largest.values()) * _tile_bytes(op.intermed_df)
        elif op.type == "matmul" and self._inner(op.attributes, op.dims)[0] > 1:
            total += mblock_tiles * _tile_bytes(op.intermed_df)
        return total

    def op(self, op: NetlistOp) -> OpPrice:
        phases = FIDELITY_PHASES.get(op.math_fidelity or "HiFi4", 4)
        fused = self.netlist.fused_ops.get(op.fused_op_id or "") if op.type == "fused_op" else None
        engines = self._fused(op, fused, phases) if fused is not None else self._plain(op, phases)
        ingress = sum(tiles * _tile_bytes(df) for tiles, df in self._input_tiles_per_core(op, fused))
        noc = ingress / (2 * self.k.noc_bytes_per_cycle.value)
        cycles = max(engines.cycles, noc) + self.k.op_latency_cycles.value
        rows, cols = op.cores
        blocks = max(1, op.dims.mblock[0] * op.dims.mblock[1] * op.t)
        flops = 2 * TILE_MACS * engines.tile_products * rows * cols
        return OpPrice(
            op.name,
            op.type,
            rows * cols,
            cycles / self.clock,
            engines,
            noc,
            blocks,
            self._l1(op, fused),
            flops,
        )

    # -- graphs -----------------------------------------------------------------------
    def _dram(self, graph: str) -> tuple[int, float]:
        """Bytes the graph moves to and from DRAM queues, and the busiest channel's seconds."""
        ops = self.netlist.ops(graph)
        used = {name for op in ops.values() for name in op.inputs} | {
            q.name for q in self.netlist.queues.values() if q.input in ops
        }
        per_channel: dict[int, float] = {}
        total = 0
        for name in sorted(used):
            queue = self.netlist.queues.get(name)
            if queue is None:
                continue
            t, r, c = _tiles(queue)
            size = t * r * c * _tile_bytes(queue.df)
            total += size
            channels = [channel for channel, _ in queue.dram] or [0]
            for channel in channels:
                per_channel[channel] = per_channel.get(channel, 0.0) + size / len(channels)
        bandwidth = self.k.dram_bytes_per_s.value / self.k.dram_channels.value
        return total, max(per_channel.values(), default=0.0) / bandwidth

    def graph(self, graph: str) -> tuple[float, list[OpPrice], int, float]:
        ops = self.netlist.ops(graph)
        prices = {name: self.op(op) for name, op in ops.items()}
        start: dict[str, float] = {}
        finish: dict[str, float] = {}

        def visit(name: str) -> None:
            if name in finish:
                return
            finish[name] = 0.0  # cycle guard; the checker rejects cycles
            producers = [p for p in ops[name].inputs if p in ops]
            for producer in producers:
                visit(producer)
            price = prices[name]
            first = [start[p] + prices[p].seconds / prices[p].blocks for p in producers]
            last = [finish[p] + price.seconds / price.blocks for p in producers]
            start[name] = max(first, default=0.0)
            finish[name] = max([start[name] + price.seconds, *last])

        for name in ops:
            visit(name)
        dram_bytes, dram_seconds = self._dram(graph)
        seconds = max(max(finish.values(), default=0.0), dram_seconds)
        return seconds, list(prices.values()), dram_bytes, dram_seconds

    def run(self) -> NetlistPrice:
        seconds = dram_seconds = 0.0
        dram_bytes = 0
        all_ops: list[OpPrice] = []
        for graph in graph_runs(self.netlist):
            graph_seconds, prices, moved, dram = self.graph(graph)
            seconds += graph_seconds
            dram_bytes += moved
            dram_seconds += dram
            all_ops.extend(prices)
        fidelities = {
            op.math_fidelity or "HiFi4" for op in self.netlist.all_ops() if _has_matmul(self.netlist, op)
        }
        phases = min((FIDELITY_PHASES.get(f, 4) for f in fidelities), default=4)
        rows, cols = self.target.facts["grid"]
        peak = rows * cols * self.macs * 2 * self.clock / phases
        capacity = int(self.k.l1_bytes.value - self.k.l1_reserved_bytes.value)
        peak_l1 = max((p.l1_bytes for p in all_ops), default=0)
        reasons = tuple(
            f"op {p.name} needs {p.l1_bytes / 1024:.0f} KiB of L1 per core for its buffers, "
            f"{capacity / 1024:.0f} KiB are free on {self.target.name}"
            for p in all_ops
            if p.l1_bytes > capacity
        )
        dest = int(self.target.facts["dest_tiles_16bit"]) * TILE_BYTES["Float16_b"]
        return NetlistPrice(
            self.target.name, seconds, tuple(all_ops), dram_bytes, dram_seconds,
            sum(p.flops for p in all_ops), peak, capacity, dest, peak_l1, reasons,
        )  # fmt: skip


def _has_matmul(netlist: Netlist, op: NetlistOp) -> bool:
    if op.type == "matmul":
        return True
    fused = netlist.fused_ops.get(op.fused_op_id or "") if op.type == "fused_op" else None
    return fused is not None and any(sub.is_matmul for _, _, sub in fused.sub_ops())


def price_netlist(netlist: Netlist, target: Target) -> NetlistPrice:
    """The modeled run of ``netlist`` on ``target`` (a Tenstorrent target)."""
    return _Pricer(netlist, target).run()
