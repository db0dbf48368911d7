"""DRAM queues: host inputs (parameters, constants), outputs, and their DRAM buffers.

Every queue has one buffer per core of its grid. Buffers are spread over the DRAM
channels in turn and laid out back to back in each channel from ``0x10000000``, each
``header + entries x t x tiles x tile bytes`` long (the size the checker's overlap rule
uses), aligned to 256 bytes, so no two buffers of a channel overlap. A host input queue
is split into as many buffers as there are DRAM channels (a grid dividing its tiles), so
reading it uses every channel's bandwidth, not one channel's.
"""

from __future__ import annotations

from typing import Any

from nkigym_graph.buda.rules.queues import QUEUE_HEADER_BYTES, TILE_BYTES

from .arch import Arch
from .blocking import Blocking
from .constants import Constant
from .nodes import ConstSource, NodeSource, ParamSource, Source
from .shapes import tile_shape

DRAM_BASE = 0x10000000
ALIGN = 0x100
Pair = tuple[int, int]


class Hex(int):
    """An address, written in hex in the netlist text."""


class DramAllocator:
    """Hands out non-overlapping ``[channel, address]`` buffers, each on the channel with the
    fewest bytes so far (ties: the next channel in turn). Every queue is read or written
    once per run, so the bytes a channel holds are the bytes it moves: balancing them
    balances the DRAM traffic, which bounds a DRAM-bound netlist.

    >>> dram = DramAllocator(3)
    >>> [dram.take(size)[0] for size in (4096, 4096, 4096, 4096, 64, 64, 64)]
    [0, 1, 2, 0, 1, 2, 1]
    """

    def __init__(self, channels: int) -> None:
        self.channels = channels
        self.next = [DRAM_BASE] * channels
        self.turn = 0

    def take(self, size: int) -> list[int]:
        channel = min(range(self.channels), key=lambda c: (self.next[c], (c - self.turn) % self.channels))
        self.turn = channel + 1
        address = self.next[channel]
        self.next[channel] = address + -(-size // ALIGN) * ALIGN
        return [channel, Hex(address)]


def buffer_bytes(tiles_per_core: int, df: str, entries: int = 1) -> int:
    """Bytes of one per-core queue buffer (header included)."""
    return QUEUE_HEADER_BYTES + entries * tiles_per_core * TILE_BYTES.get(df, TILE_BYTES["Float16"])


def source_queue_shape(source: Source) -> Pair:
    """Element shape of the queue (or producer output) a source reads, before its TMs."""
    if isinstance(source, ConstSource):
        return source.constant.queue_shape(*source.shape)
    rows, cols = source.layout.stored_shape(source.shape)
    if isinstance(source, NodeSource) and source.transposed:
        return (cols, rows)
    return (rows, cols)


def source_df(source: Source, arch: Arch) -> str:
    """Data format of what ``source`` reads: another op's output as that op stores it
    (``Arch.stored_df``), a host queue in ``arch.df``."""
    if isinstance(source, NodeSource):
        return arch.stored_df(source_queue_shape(source))
    return arch.df


def queue_spec(
    producer: str, grid: Pair, dims: tuple[Pair, Pair], arch: Arch, dram: DramAllocator, df: str | None = None
) -> dict[str, Any]:
    """A DRAM queue written by ``producer`` (``HOST`` or an op) on ``grid`` with blocks
    ``dims``, in data format ``df`` (default ``arch.df``)."""
    df = arch.df if df is None else df
    (m, n), (r, c) = dims
    size = buffer_bytes(m * n * r * c, df)
    return {
        "input": producer,
        "type": "queue",
        "entries": 1,
        "grid_size": list(grid),
        "t": 1,
        "mblock": [m, n],
        "ublock": [r, c],
        "ublock_order": "r",
        "df": df,
        "target_device": 0,
        "loc": "dram",
        "dram": [dram.take(size) for _ in range(grid[0] * grid[1])],
    }


HOST_BUFFERS_PER_CHANNEL = 4
"""A host queue is cut into up to this many buffers per DRAM channel, so that buffers of
a size that does not divide evenly among the channels still balance them."""


def spread_grid(tiles: Pair, channels: int, longest: int = 8) -> Pair:
    """The grid of at most ``channels`` buffers, neither side longer than ``longest``, that
    divides ``tiles`` with the most buffers (fewest rows among equals).

    >>> spread_grid((32, 32), 6), spread_grid((32, 32), 24), spread_grid((1, 4), 8), spread_grid((1, 1), 6)
    ((1, 4), (2, 8), (1, 4), (1, 1))
    """
    best = (1, 1)
    for rows in range(1, min(tiles[0], channels, longest) + 1):
        if tiles[0] % rows:
            continue
        cols = max(c for c in range(1, min(channels // rows, longest) + 1) if tiles[1] % c == 0)
        if rows * cols > best[0] * best[1]:
            best = (rows, cols)
    return best


def host_queue(shape: Pair, arch: Arch, dram: DramAllocator, df: str | None = None) -> dict[str, Any]:
    """A host input queue holding a tensor of ``shape`` elements (padded to tiles), in up
    to :data:`HOST_BUFFERS_PER_CHANNEL` buffers per DRAM channel where its tiles divide so
    (:func:`spread_grid`; :class:`DramAllocator` balances them over the channels)."""
    tiles = tile_shape(shape)
    grid = spread_grid(tiles, arch.dram_channels * HOST_BUFFERS_PER_CHANNEL)
    return queue_spec("HOST", grid, Blocking(grid, [tiles], arch.dest_tiles).dims(tiles), arch, dram, df)


def describe_source(source: ParamSource | ConstSource) -> dict[str, Any]:
    """What the host writes into the queue of ``source`` (``facts["host_queues"]``)."""
    if isinstance(source, ParamSource):
        return {"param": source.name, "transposed": source.transposed}
    constant: Constant = source.constant
    return constant.describe()
