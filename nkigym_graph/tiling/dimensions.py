"""Dimension analysis: every dimension of a traced function, its kind and its tiles.

A dimension is one set of the trace's axis union-find. The returned tensor's
dimensions are *parallel* (the emitted loops run over their tiles, outermost first);
every other dimension is a *reduction* (a matmul's K, a reduced free axis). Each
dimension is tiled at the smallest initial tile size (``target.tile_sizes``) and limit
of every role the ops that touch it give it (``nc_matmul``'s ``M``/``K``/``N``, the
``partition``/``free`` roles of loads, stores and vector ops); the last tile of a
ragged size is smaller (1000 at 128: seven tiles of 128 and one of 104).

>>> from nkigym_graph.ir.ops import NC_MATMUL
>>> from nkigym_graph.ir.targets import TRN2
>>> from nkigym_graph.tiling.trace import Trace
>>> trace = Trace()
>>> a, b = trace.param("a", (200, 128)), trace.param("b", (200, 256))
>>> dims = analyze(trace, trace.record(NC_MATMUL, (a, b), ()), TRN2)
>>> k = dims.dimension(a.axes[0])
>>> k.kind, k.tiles
('reduction', ((0, 128), (128, 200)))
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from nkigym_graph.ir.ops import LOAD, STORE
from nkigym_graph.ir.ops.base import Op
from nkigym_graph.ir.slices import Range
from nkigym_graph.ir.targets import Target
from nkigym_graph.tiling.trace import Call, Trace, TracedTensor

PARALLEL = "parallel"
REDUCTION = "reduction"


class Dimension(NamedTuple):
    """One dimension (a set of joined axes) of the traced function."""

    root: int
    """Representative axis id."""
    size: int
    kind: str
    """``parallel`` (an axis of the returned tensor) or ``reduction``."""
    tile: int
    """Tile size: the last tile may be smaller."""
    tiles: tuple[Range, ...]
    """``(start, stop)`` of every tile, in order."""
    roles: frozenset[str]
    """The axis labels ops gave it (``K``, ``M``, ``partition``, ...)."""
    names: tuple[str, ...]
    """The names of the joined axes (``a[axis 0]``, ...)."""


class DimensionAnalysis:
    """The dimensions of a traced function and what its returned tensor needs."""

    __slots__ = ("_by_root", "_trace", "calls", "output", "params")

    def __init__(
        self,
        trace: Trace,
        output: TracedTensor,
        dims: dict[int, Dimension],
        calls: tuple[Call, ...],
        params: tuple[str, ...],
    ) -> None:
        self._trace = trace
        self._by_root = dims
        self.output = output
        self.calls = calls
        """The calls the output depends on, in recording order."""
        self.params = params
        """The parameters the output depends on."""

    def dimension(self, axis: int) -> Dimension:
        """The dimension axis ``axis`` belongs to."""
        return self._by_root[self._trace.axes.find(axis)]

    def tiles(self, axis: int) -> tuple[Range, ...]:
        """The tiles of ``axis``'s dimension."""
        return self.dimension(axis).tiles

    def __iter__(self) -> Iterator[Dimension]:
        return iter(self._by_root.values())

    def __len__(self) -> int:
        return len(self._by_root)


def split(size: int, tile: int) -> tuple[Range, ...]:
    """``(start, stop)`` tiles of ``tile`` covering ``size``; the last one may be smaller."""
    return tuple((start, min(start + tile, size)) for start in range(0, size, tile))


def analyze(trace: Trace, output: TracedTensor, target: Target) -> DimensionAnalysis:
    """Classify and tile the dimensions the returned ``output`` depends on."""
    axes = trace.axes
    calls, params = _reachable(output)
    roles: dict[int, list[tuple[Op, str]]] = {}

    def touch(op: Op, position: int, tensor_axes: tuple[int, ...]) -> None:
        for label, axis in zip(op.axes[position], tensor_axes, strict=True):
            roles.setdefault(axes.find(axis), []).append((op, label))

    for name in params:
        touch(LOAD, 0, trace.params[name].axes)
    for call in calls:
        op = call.op
        for position, tensor in zip(op.read_positions, call.inputs, strict=True):
            touch(op, position, tensor.axes)
        touch(op, op.write_positions[0], call.out_axes)
    touch(STORE, 1, output.axes)
    parallel = {axes.find(a) for a in output.axes}
    dims: dict[int, Dimension] = {}
    for root, members in axes.classes().items():
        if root not in roles:
            continue
        size = axes.size(root)
        tile = _tile_size(roles[root], target)
        dims[root] = Dimension(
            root=root,
            size=size,
            kind=PARALLEL if root in parallel else REDUCTION,
            tile=tile,
            tiles=split(size, tile),
            roles=frozenset(label for _, label in roles[root]),
            names=tuple(axes.name(a) for a in members),
        )
    return DimensionAnalysis(trace, output, dims, calls, params)


def _tile_size(uses: list[tuple[Op, str]], target: Target) -> int:
    """The smallest initial tile size and limit among the roles of a dimension."""
    best: int | None = None
    for op, label in uses:
        for bound in (target.tile_sizes.get(label), op.limit(label, target)):
            if bound is not None and (best is None or bound < best):
                best = bound
    return best if best is not None else target.partition_size


def _reachable(output: TracedTensor) -> tuple[tuple[Call, ...], tuple[str, ...]]:
    """The calls (in recording order) and parameters (in signature order) ``output`` needs."""
    calls: set[Call] = set()
    params: set[str] = set()
    stack = [output]
    while stack:
        source = stack.pop().source
        if isinstance(source, str):
            params.add(source)
        elif source not in calls:
            calls.add(source)
            stack.extend(source.inputs)
    ordered = tuple(sorted(calls, key=lambda c: c.index))
    return ordered, tuple(p for p in output.trace.params if p in params)
