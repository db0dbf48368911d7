"""DRAM queue allocation checks."""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, NetlistContext
from nkigym_graph.buda.formats import TILE_BYTES
from nkigym_graph.buda.model import Queue
from nkigym_graph.buda.rules.registry import netlist_rule

QUEUE_HEADER_BYTES = 32


def buffer_bytes(queue: Queue) -> int:
    """Bytes of one per-core buffer of a queue: header + entries x t x tiles x tile size."""
    tiles = queue.entries * queue.t * queue.dims.rows * queue.dims.cols
    return QUEUE_HEADER_BYTES + tiles * TILE_BYTES.get(str(queue.df), TILE_BYTES["Float16"])


@netlist_rule("queues.buffers", "a DRAM queue has one [channel, address] per grid core")
def one_buffer_per_core(ctx: NetlistContext) -> Iterator[Finding]:
    """A DRAM queue lists ``grid_size[0] * grid_size[1]`` buffers ("Num buffers in queue
    don't match grid size")."""
    for queue in ctx.netlist.queues.values():
        cores = queue.grid_size[0] * queue.grid_size[1]
        if queue.loc == "dram" and len(queue.dram) != cores:
            yield Finding(f"queue '{queue.name}' has {len(queue.dram)} dram buffers for {cores} grid cores")


@netlist_rule("queues.overlap", "DRAM buffers do not overlap within a channel")
def no_overlap(ctx: NetlistContext) -> Iterator[Finding]:
    """Two DRAM buffers on the same device and channel do not share bytes; a buffer spans
    ``[address, address + buffer_bytes)``. Aliased queues (``alias``) are skipped."""
    spans: dict[tuple[int, int], list[tuple[int, int, str]]] = {}
    for queue in ctx.netlist.queues.values():
        if queue.loc != "dram" or queue.spec.get("alias"):
            continue
        size = buffer_bytes(queue)
        for channel, address in queue.dram:
            spans.setdefault((queue.target_device, channel), []).append((address, address + size, queue.name))
    for (device, channel), items in sorted(spans.items()):
        items.sort()
        reach = items[0]
        for start, end, name in items[1:]:
            if start < reach[1]:
                yield Finding(
                    f"queues '{reach[2]}' [{reach[0]:#x}, {reach[1]:#x}) "
                    f"and '{name}' (from {start:#x}) "
                    f"overlap on device {device}, DRAM channel {channel}"
                )
            if end > reach[1]:
                reach = (start, end, name)
