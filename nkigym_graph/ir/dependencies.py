"""Dependency edges of a statement list, in one forward pass.

For every read the builder finds the earlier writes whose regions overlap it (data
edges, labelled with the variable, operand position and slices); for every write it
finds the earlier overlapping writes (write-after-write) and reads (write-after-read)
and adds ordering edges (a statement reading two regions of one variable is ordered
only against writes overlapping either region, not the gap between them). A write
that fully covers an earlier one retires it, so an
accumulator chain or a tile written once keeps its active set small, and a bucket
grid over each variable keeps overlap queries local: the pass is linear in practice.

Edges always point forward in statement order, so the graph is acyclic by
construction; a read with no earlier write is reported as uncovered.

Edges are found per variable, independently of every other variable, so the pass can
run over the statements that mention some variables only (``nodes``, with
``write_counts`` holding just those variables): a derived snapshot recomputes the
edges of the variables an edit touched and keeps the rest (``nkigym_graph.ir.derivation``).
Ordering edges are recorded even between statements that also have a data edge; the
program hides those where it shows edges.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from nkigym_graph.ir.slices import Slices, contains, intersection, overlaps
from nkigym_graph.ir.statement import Statements

_BUCKET_EDGE = 128
"""Side of the cells of the region index (an indexing granularity, not a hardware limit)."""
_SCAN_LIMIT = 8
"""Up to this many entries a variable's regions are scanned rather than bucketed."""


class Use(NamedTuple):
    """A data dependency: the consumer reads ``var[slices]`` at operand ``position``."""

    var: str
    position: int
    slices: Slices


DataIn = list[tuple[int, Use]]
"""Data edges into one node: ``(source node, use)``."""
OrderIn = list[tuple[int, str]]
"""Ordering edges into one node: ``(earlier node, variable)``."""


class Dependencies(NamedTuple):
    """The edges of a program, by destination node, and the reads no earlier write covers."""

    data: dict[int, DataIn]
    order: dict[int, OrderIn]
    uncovered: list[tuple[int, int]]
    """``(node, position)`` of reads of written variables not (fully) written before."""


def _cells(slices: Slices) -> Iterator[tuple[int, ...]]:
    ranges = [range(start // _BUCKET_EDGE, (stop - 1) // _BUCKET_EDGE + 1) for start, stop in slices]
    if len(ranges) == 2:
        r0, r1 = ranges
        for a in r0:
            for b in r1:
                yield (a, b)
        return
    from itertools import product

    yield from product(*ranges)


class _RegionIndex:
    """Entries ``(node, slices)`` of one variable, findable by overlap.

    Small sets are scanned; past ``_SCAN_LIMIT`` entries a grid of cells is built.
    """

    __slots__ = ("cells", "entries")

    def __init__(self) -> None:
        self.entries: dict[int, Slices] = {}
        self.cells: dict[tuple[int, ...], set[int]] | None = None

    def add(self, node: int, slices: Slices) -> None:
        self.entries[node] = slices
        cells = self.cells
        if cells is None:
            if len(self.entries) > _SCAN_LIMIT:
                self._build_cells()
            return
        for cell in _cells(slices):
            bucket = cells.get(cell)
            if bucket is None:
                cells[cell] = {node}
            else:
                bucket.add(node)

    def _build_cells(self) -> None:
        self.cells = {}
        for node, slices in self.entries.items():
            for cell in _cells(slices):
                self.cells.setdefault(cell, set()).add(node)

    def remove(self, node: int) -> None:
        slices = self.entries.pop(node)
        if self.cells is not None:
            for cell in _cells(slices):
                self.cells[cell].discard(node)

    def overlapping(self, slices: Slices) -> list[int]:
        entries = self.entries
        cells = self.cells
        if cells is None:
            if len(entries) == 1:
                for n, s in entries.items():
                    return [n] if overlaps(s, slices) else []
            return [n for n, s in entries.items() if overlaps(s, slices)]
        found: set[int] = set()
        for cell in _cells(slices):
            bucket = cells.get(cell)
            if bucket:
                found |= bucket
        return sorted(n for n in found if overlaps(entries[n], slices))


def _covered(region: Slices, pieces: list[Slices]) -> bool:
    """Whether the union of ``pieces`` covers ``region``."""
    for piece in pieces:
        if contains(piece, region):
            return True
    import numpy as np

    mask = np.zeros(tuple(stop - start for start, stop in region), dtype=bool)
    for piece in pieces:
        common = intersection(piece, region)
        if common is not None:
            mask[tuple(slice(s - r[0], e - r[0]) for (s, e), r in zip(common, region, strict=True))] = True
    return bool(mask.all())


def build_dependencies(
    statements: Statements, write_counts: dict[str, int], nodes: Iterable[int] | None = None
) -> Dependencies:
    """Data and ordering edges for ``statements``.

    ``write_counts`` says how many statements write each variable: reads of variables
    nobody writes (the parameters) need no tracking, and a read after a variable's last
    write needs no write-after-read bookkeeping. Only variables in ``write_counts`` are
    tracked; ``nodes`` (ascending) restricts the pass to the statements mentioning them.
    """
    remaining = dict(write_counts)
    data: dict[int, DataIn] = {}
    order: dict[int, OrderIn] = {}
    uncovered: list[tuple[int, int]] = []
    writes: dict[str, _RegionIndex] = {}
    reads: dict[str, _RegionIndex] = {}
    tracked = remaining.keys()
    reader_of: dict[int, int] = {}
    """Read entries past a node's first read of a variable (negative ids) -> the node."""
    positions_of: dict[tuple[int, bool], tuple[tuple[int, ...], tuple[int, ...]]] = {}

    for node in range(len(statements)) if nodes is None else nodes:
        stmt = statements[node]
        op = stmt.op
        operands = stmt.operands
        accumulate = stmt.accumulate
        positions = positions_of.get((id(op), accumulate))
        if positions is None:
            read_positions = op.read_positions + op.write_positions if accumulate else op.read_positions
            positions = positions_of[(id(op), accumulate)] = (read_positions, op.write_positions)
        read_positions, write_positions = positions
        # -- reads: data edges from the active writers of each region read
        for position in read_positions:
            var, slices = operands[position]
            if var not in tracked:
                continue
            index = writes.get(var)
            if index is None:
                uncovered.append((node, position))
            else:
                entries = index.entries
                if index.cells is None and len(entries) == 1:  # one active write: the common case
                    for only, region in entries.items():
                        sources = [only] if overlaps(region, slices) else []
                else:
                    sources = index.overlapping(slices)
                if not sources:
                    uncovered.append((node, position))
                else:
                    single = len(sources) == 1 and contains(entries[sources[0]], slices)
                    if not single and not _covered(slices, [entries[s] for s in sources]):
                        uncovered.append((node, position))
                    use = Use(var, position, slices)
                    found = data.get(node)
                    if found is None:
                        data[node] = [(src, use) for src in sources]
                    else:
                        found.extend((src, use) for src in sources)
            if not remaining[var]:
                continue  # no later write can conflict with this read
            pending = reads.get(var)
            if pending is None:
                pending = reads[var] = _RegionIndex()
            previous = pending.entries.get(node)
            if previous is None:
                pending.add(node, slices)
            elif contains(slices, previous):  # a second read of the variable, covering the first
                pending.remove(node)
                pending.add(node, slices)
            elif not contains(previous, slices):  # another region: its own entry
                extra = -1 - len(reader_of)
                reader_of[extra] = node
                pending.add(extra, slices)
        # -- writes: order after earlier overlapping writes and reads
        for position in write_positions:
            var, slices = operands[position]
            if var not in tracked:
                continue  # not tracked in this pass
            remaining[var] -= 1
            index = writes.get(var)
            if index is None:
                index = writes[var] = _RegionIndex()
            elif index.entries:
                for prev in index.overlapping(slices):
                    if prev != node:
                        order.setdefault(node, []).append((prev, var))
                    if contains(slices, index.entries[prev]):
                        index.remove(prev)
            pending = reads.get(var)
            if pending is not None and pending.entries:
                readers: list[int] = []
                for entry in pending.overlapping(slices):
                    reader = reader_of.get(entry, entry)
                    if reader != node and reader not in readers:
                        readers.append(reader)
                    if contains(slices, pending.entries[entry]):
                        pending.remove(entry)
                if readers:
                    order.setdefault(node, []).extend((reader, var) for reader in sorted(readers))
            index.add(node, slices)
    return Dependencies(data, order, uncovered)
