"""Emission: the statements of the tiled program, one output tile at a time.

The loops over the returned tensor's tiles are outermost (dimension 0, then 1). For
each output tile the whole computation is emitted on demand, from the output back
to the parameters: a call asked for a tile of its result asks its inputs for the
matching tiles (by the op's axis labels), loading each parameter tile it needs (one
load per operand per tile, no reuse across output tiles, as in seed 001's "Before";
``data_reuse`` shares them later). A call that reduces a dimension loops over that
dimension's tiles: the first partial result defines the result tile, later ones are
combined (``+=`` or a ``tensor_tensor``, see ``combine``), and whatever consumes the
result is emitted once, after the loop. Then the tile is stored into the output.
Intermediates are named ``tensor_0, tensor_1, ...`` in emission order.

Each tile of a call's result is computed once, the first time an output tile needs
it, and read by every later one: a double matmul computes an inner tile within the
first outer output tile that needs it, with its own K loop, and accumulates it into
every outer tile reading it; a softmax computes its row maximum once per row, not once
per output tile (no transform could remove such recomputation). Parameter tiles are
loaded once per output tile that needs them (per chunk of a reduction within it),
except those a value read through a broadcast operand (a row statistic ``[P, 1]``, a
``[1, F]`` row) is computed from: those too are loaded once. A broadcast operand's
size-1 dimension always reads tile 0.

A mask by position (``affine_select``) emits no statement for a tile it keeps whole
and nothing at all for a tile it masks whole: that tile is ``Filled`` (:mod:`.masking`),
and the statements reading it are skipped wherever its value decides theirs (a reduction
skips the chunk), so causal attention computes nothing above the diagonal.

Tiles are passed around by index; every slice tuple and parameter operand is built
once, before the loops, so the loops only name tiles and build statements.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterator
from itertools import chain, count, product
from math import prod

from nkigym_graph.errors import TilingError
from nkigym_graph.ir.ops import ALLOC, BROADCAST, LOAD, STORE
from nkigym_graph.ir.ops.select import ALL, NONE
from nkigym_graph.ir.slices import Range, Slices
from nkigym_graph.ir.statement import Operand, Statement, make_attrs
from nkigym_graph.tiling.combine import ACCUMULATE, combine_rule
from nkigym_graph.tiling.dimensions import Dimension, DimensionAnalysis
from nkigym_graph.tiling.errors import StatementLimitError
from nkigym_graph.tiling.masking import (
    Filled,
    MaskByPosition,
    Tile,
    constant_of,
    fillable_calls,
    fold_identity,
    operand,
)
from nkigym_graph.tiling.online import find_online_groups, online_functions
from nkigym_graph.tiling.trace import Call, TracedTensor

TileFn = Callable[[int, int], Tile]
"""Emits the statements computing tile ``(i0, i1)`` of a tensor; returns the operand
that reads that tile whole, or a ``Filled`` tile (:mod:`.masking`: not computed)."""

Table = list[list[Slices]]
Source = str | Call
"""A parameter name or a recorded call: what produces a tensor."""
Key = tuple[Source, int, int]

_new = tuple.__new__
"""Builds an ``Operand`` / ``Statement`` from a complete field tuple (no defaults to fill)."""


def fresh_names(reserved: Collection[str]) -> Iterator[str]:
    """``tensor_0, tensor_1, ...``, skipping any name in ``reserved``."""
    batches = ([f"tensor_{i}" for i in range(b, b + 4096)] for b in count(0, 4096))
    names = chain.from_iterable(batches)
    return (n for n in names if n not in reserved) if reserved else names


def emit_statements(
    dims: DimensionAnalysis,
    output_name: str,
    dtype: str,
    reserved: Collection[str] = (),
    limit: int | None = None,
    online: int = 0,
) -> list[Statement]:
    """The tiled program's statements: the output allocation, then every output tile;
    ``StatementLimitError`` as soon as there are more than ``limit``. With ``online``
    (columns per step), softmax-style rows are summed in one pass (:mod:`.online`). Tile functions call
    their inputs' (a few frames per call of the longest chain), so the recursion limit
    is raised to fit while emitting."""
    depth = 4 * len(dims.calls) + 500
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, depth))
    try:
        return _Emitter(dims, fresh_names(reserved), online).run(output_name, dtype, limit)
    finally:
        sys.setrecursionlimit(previous)


class _Emitter:
    """Builds one tile function per parameter and call, then runs the output loops."""

    def __init__(self, dims: DimensionAnalysis, names: Iterator[str], online: int = 0) -> None:
        self.dims = dims
        self.statements: list[Statement] = []
        self.next_name = names.__next__
        self.slices: dict[Slices, Slices] = {}
        """Interned slice tuples: equal slices share one object."""
        self.memo: dict[Key, Tile] = {}
        self.scopes: list[list[Key]] = []
        self.functions: dict[Source, TileFn] = {}
        uses: dict[Source, int] = {}
        for call in dims.calls:
            for tensor in call.inputs:
                uses[tensor.source] = uses.get(tensor.source, 0) + 1
        self.shared = {source for source, n in uses.items() if n > 1}
        """Parameters and calls read more than once: emitted once per loop iteration."""
        self.kept = kept_sources(dims.calls)
        """Parameters a broadcast operand's value is computed from: loaded once per tile."""
        self.fillable = fillable_calls(dims.calls)
        """Calls whose tiles may be ``Filled`` (a mask by position and what reads it)."""
        groups = find_online_groups(dims.calls) if online else []
        passes = {call: fn for group in groups for call, fn in online_functions(self, group, online).items()}
        for name in dims.params:
            self._register(name, self._load_fn(name))
        for call in dims.calls:
            found = passes.get(call)
            self._register(call, found if found is not None else self._call_fn(call))

    # -- running ------------------------------------------------------------------------
    def run(self, output_name: str, dtype: str, limit: int | None = None) -> list[Statement]:
        """Allocate the output and emit every output tile, dimension 0 outermost."""
        out = self.dims.output
        d0, d1 = (self.dims.dimension(axis) for axis in out.axes)
        shape = ((0, d0.size), (0, d1.size))
        stmts = self.statements
        append = stmts.append
        bound = limit if limit is not None else float("inf")
        append(Statement(ALLOC, (Operand(output_name, shape),), make_attrs(dtype=dtype)))
        root = self._fn(out)
        regions = _grid(d0, d1, lambda r0, r1: Operand(output_name, self._intern((r0, r1))))
        scopes = self.scopes
        for i0, row in enumerate(regions):
            for i1, region in enumerate(row):
                scopes.append([])
                tile = operand(root(i0, i1))
                append(_new(Statement, (STORE, (tile, region), (), False)))
                self._close_scope()
                if len(stmts) > bound:
                    raise StatementLimitError(f"more than {bound:,} statements")
        return stmts

    def _close_scope(self) -> None:
        memo = self.memo
        for key in self.scopes.pop():
            del memo[key]

    # -- tables -------------------------------------------------------------------------
    def _intern(self, slices: Slices) -> Slices:
        return self.slices.setdefault(slices, slices)

    def _whole(self, d0: Dimension, d1: Dimension) -> Table:
        """``table[i0][i1]``: the slices of tile ``(i0, i1)`` read whole (from 0)."""
        return _grid(d0, d1, lambda r0, r1: self._intern(((0, r0[1] - r0[0]), (0, r1[1] - r1[0]))))

    def _dims_of(self, tensor_axes: tuple[int, ...]) -> tuple[Dimension, Dimension]:
        d0, d1 = (self.dims.dimension(axis) for axis in tensor_axes)
        return d0, d1

    # -- tile functions -----------------------------------------------------------------
    def _fn(self, tensor: TracedTensor) -> TileFn:
        return self.functions[tensor.source]

    def _register(self, source: Source, fn: TileFn) -> None:
        if isinstance(source, Call) or source in self.kept:
            fn = self._kept(source, fn)
        elif source in self.shared:
            fn = self._memoized(source, fn)
        self.functions[source] = fn

    def _kept(self, source: Source, fn: TileFn) -> TileFn:
        memo: dict[tuple[int, int], Tile] = {}

        def tile(i0: int, i1: int) -> Tile:
            found = memo.get((i0, i1))
            if found is None:
                found = memo[(i0, i1)] = fn(i0, i1)
            return found

        return tile

    def _memoized(self, source: Source, fn: TileFn) -> TileFn:
        memo, scopes = self.memo, self.scopes

        def tile(i0: int, i1: int) -> Tile:
            k = (source, i0, i1)
            found = memo.get(k)
            if found is None:
                found = memo[k] = fn(i0, i1)
                scopes[-1].append(k)
            return found

        return tile

    def _load_fn(self, param: str) -> TileFn:
        d0, d1 = self._dims_of(self.dims.output.trace.params[param].axes)
        sources = _grid(d0, d1, lambda r0, r1: Operand(param, self._intern((r0, r1))))
        whole = self._whole(d0, d1)
        append, next_name = self.statements.append, self.next_name

        def load(i0: int, i1: int) -> Operand:
            dst = _new(Operand, (next_name(), whole[i0][i1]))
            append(_new(Statement, (LOAD, (sources[i0][i1], dst), (), False)))
            return dst

        return load

    def _mask_fn(self, call: Call, op: MaskByPosition) -> TileFn:
        """A tile function for a mask by position (``affine_select``): no statement for a
        tile it keeps whole, a ``Filled`` tile for one it masks whole (:mod:`.masking`),
        else the mask with the predicate offset to the tile."""
        attrs = call.attrs
        (source,) = (self._fn(tensor) for tensor in call.inputs)
        d0, d1 = self._dims_of(call.out_axes)
        whole = self._whole(d0, d1)
        fill = float(call.op.attr_values(attrs)["fill"])
        append, next_name = self.statements.append, self.next_name

        def mask(i0: int, i1: int) -> Tile:
            rows, cols = d0.tiles[i0], d1.tiles[i1]
            kept = op.coverage(attrs, rows, cols)
            if kept == ALL:
                return source(i0, i1)

            def emit() -> Operand:
                data = operand(source(i0, i1))
                dst = _new(Operand, (next_name(), whole[i0][i1]))
                tiled = op.tile_attrs(attrs, rows[0], cols[0])
                append(_new(Statement, (call.op, (data, dst), tiled, False)))
                return dst

            return Filled(fill, emit) if kept == NONE else emit()

        return mask

    def _call_fn(self, call: Call) -> TileFn:
        """A tile function for ``call``; indexes are its result dims', then reduced dims'."""
        op, attrs = call.op, call.attrs
        if isinstance(op, MaskByPosition):
            return self._mask_fn(call, op)
        write = len(op.operand_names) - 1
        if op.write_positions != (write,) or op.read_positions != tuple(range(write)):
            raise TilingError(
                f"{call.describe()}: tiling needs the inputs first and one destination "
                f"last, {op.name} has operands {op.operand_names}"
            )
        index = {label: i for i, label in enumerate(op.axes[write])}
        reduced: list[int] = []
        sizes: list[int] = []
        for labels, tensor in zip(op.axes, call.inputs, strict=False):
            for label, axis in zip(labels, tensor.axes, strict=True):
                if label not in index and label != BROADCAST:
                    index[label] = len(index)
                    reduced.append(len(self.dims.tiles(axis)))
                    sizes.append(self.dims.dimension(axis).size)
        spread = any(BROADCAST in labels for labels in op.axes)
        index[BROADCAST] = len(index)  # a broadcast dimension: always its one tile, 0
        inputs: list[tuple[TileFn, int, int]] = []
        for labels, tensor in zip(op.axes, call.inputs, strict=False):
            where = [index[label] for label in labels]
            inputs.append((self._fn(tensor), where[0], where[1]))
        whole = self._whole(*self._dims_of(call.out_axes))
        append, next_name = self.statements.append, self.next_name

        reads = _reader(inputs)
        fillable = any(tensor.source in self.fillable for tensor in call.inputs)
        if not reduced:
            tail = (0,) if spread else ()

            def compute(i0: int, i1: int) -> Tile:
                args = reads((i0, i1, *tail))
                dst = _new(Operand, (next_name(), whole[i0][i1]))
                append(_new(Statement, (op, (*args, dst), attrs, False)))
                return dst

            def compute_fillable(i0: int, i1: int) -> Tile:
                tiles = reads((i0, i1, *tail))

                def emit() -> Operand:
                    dst = _new(Operand, (next_name(), whole[i0][i1]))
                    append(_new(Statement, (op, (*map(operand, tiles), dst), attrs, False)))
                    return dst

                known = constant_of(op, attrs, tiles)
                return emit() if known is None else Filled(known, emit)

            return compute_fillable if fillable else compute

        rule = combine_rule(op, attrs) if any(n > 1 for n in reduced) else ACCUMULATE
        fold, fold_attrs = rule.op, rule.attrs
        finish = rule.finish(prod(sizes))
        attrs = rule.partial if rule.partial is not None else attrs
        chunks = list(product(*map(range, reduced), *([range(1)] if spread else [])))
        scopes, close = self.scopes, self._close_scope
        scoped = bool(self.shared)
        identity = fold_identity(None if fold is None else dict(fold_attrs).get("op"))

        def partial(idx: tuple[int, ...], skip: bool) -> tuple[Tile, ...] | None:
            """The chunk's operands, or None (with ``skip``) when a ``Filled`` one makes
            the partial result the fold's identity (the operands after it unread)."""
            if not fillable:
                return reads(idx)
            tiles: list[Tile] = []
            for fn, a, b in inputs:
                tiles.append(fn(idx[a], idx[b]))
                filled = skip and identity is not None and isinstance(tiles[-1], Filled)
                if filled and constant_of(op, attrs, tiles) == identity:
                    return None
            return tuple(map(operand, tiles))

        def reduce(i0: int, i1: int, skip: bool = True) -> Tile:
            slices = whole[i0][i1]
            acc: Operand | None = None
            for chunk in chunks:
                if scoped:
                    scopes.append([])
                args = partial((i0, i1, *chunk), skip)
                if scoped:
                    close()
                if args is None:
                    continue
                if acc is None:
                    acc = _new(Operand, (next_name(), slices))
                    append(_new(Statement, (op, (*args, acc), attrs, False)))
                elif fold is None:
                    append(_new(Statement, (op, (*args, acc), attrs, True)))
                else:
                    part = _new(Operand, (next_name(), slices))
                    append(_new(Statement, (op, (*args, part), attrs, False)))
                    folded = _new(Operand, (next_name(), slices))
                    append(_new(Statement, (fold, (acc, part, folded), fold_attrs, False)))
                    acc = folded
            if acc is None:  # every chunk skipped: the identity, computed if asked for
                assert identity is not None
                return Filled(identity, lambda: operand(reduce(i0, i1, skip=False)))
            if finish is not None:
                done = _new(Operand, (next_name(), slices))
                append(_new(Statement, (finish[0], (acc, done), finish[1], False)))
                acc = done
            return acc

        return reduce


def kept_sources(calls: Collection[Call]) -> set[Source]:
    """The parameters and calls some call reads through a broadcast operand, and every
    parameter and call those are computed from."""
    stack: list[Source] = [
        tensor.source
        for call in calls
        for labels, tensor in zip(call.op.axes, call.inputs, strict=False)
        if BROADCAST in labels
    ]
    kept: set[Source] = set()
    while stack:
        source = stack.pop()
        if source not in kept:
            kept.add(source)
            if isinstance(source, Call):
                stack.extend(t.source for t in source.inputs)
    return kept


def _reader(inputs: list[tuple[TileFn, int, int]]) -> Callable[[tuple[int, ...]], tuple[Tile, ...]]:
    """``reads(idx)``: emit every input's tile (its dims picked from ``idx``), in order."""
    if len(inputs) == 1:
        ((fa, a0, a1),) = inputs
        return lambda idx: (fa(idx[a0], idx[a1]),)
    if len(inputs) == 2:
        (fa, a0, a1), (fb, b0, b1) = inputs
        return lambda idx: (fa(idx[a0], idx[a1]), fb(idx[b0], idx[b1]))
    return lambda idx: tuple([fn(idx[a], idx[b]) for fn, a, b in inputs])


def _grid(d0: Dimension, d1: Dimension, make: Callable[[Range, Range], object]) -> list[list]:
    """``grid[i0][i1] = make(tile i0 of d0, tile i1 of d1)``."""
    return [[make(r0, r1) for r1 in d1.tiles] for r0 in d0.tiles]
