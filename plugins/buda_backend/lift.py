"""Recover the tensor-level dataflow of a tiled program (:class:`TensorGraph`).

Every tile variable is tracked as pieces ``(region of the variable) -> (value, region of
the value)``. A load makes a piece of a parameter; a compute statement resolves its
operands to ``(value, region)`` pairs and belongs to the logical op keyed by ``(op,
attributes, operand values)``: all tiles of one tensor-level operation share that key,
whatever the tile sizes (32x32 tiles for a Tenstorrent target, 128-row tiles for Trn2,
merged tiles after rewrites). Each op's region rule (:mod:`.regions`) says which region
of the result a statement writes; ``+=`` statements add chunks of the contracted axis.

Checked on the way, each with an error naming the statement: operands that are not the
same tile of their tensors, reads of a partial sum (a chunk of K or of the reduced axis
missing), accumulation onto a different op, a result not covered exactly once, stores
that do not copy a value to the same place of the output. A tile computed twice (the
tiler recomputes a row reduction for every output tile of the row) is one value.

A stitched parameter (``weight_stitch``) is also one value per weight it holds
(:class:`WeightView`): a load inside a weight's columns is a tile of that weight, so the
matmuls of different weights stay different ops. A load across two weights' columns, or
into the zero rows under a shorter weight, is rejected.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from nkigym_graph.ir.ops.base import ShapeError
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.slices import Range, Slices
from nkigym_graph.ir.statement import Statement
from nkigym_graph.stitching import StitchError, stitching_of

from .errors import BudaEmitError
from .regions import (
    RULES,
    Placement,
    Region,
    area,
    covers_once,
    intersect,
    offset,
    region_text,
    subtract,
    tiles_exactly,
)
from .tensor_graph import TensorGraph, TensorValue, WeightView, with_consumers

COMBINES = {
    ("tensor_tensor", "maximum"): "max",
    ("tensor_tensor", "minimum"): "min",
    ("tensor_tensor", "add"): "sum",
}
"""``(op, attribute op)`` that merges two partial reductions of one kind."""


NOT_IN_BUDA = {
    "affine_select": (
        "cannot be emitted for Buda: no Buda op computes a value from an element's position "
        "(there is no iota or affine select), and a mask given as a host input tensor of 0 and "
        "-inf, added elementwise, would be a parameter the program does not have; tile the "
        "function for a NeuronCore target (trn2) instead"
    ),
}
"""Ops with no Buda form, and why."""


@dataclass
class _Piece:
    at: Region
    """Region of the tile variable."""
    value: int
    region: Region
    """Region of the value it holds."""
    chunks: list[Range] = field(default_factory=list)
    extent: int = 0


@dataclass
class _Lifter:
    program: Program
    values: list[TensorValue] = field(default_factory=list)
    keys: dict[tuple[object, ...], int] = field(default_factory=dict)
    pieces: dict[str, list[_Piece]] = field(default_factory=dict)
    written: dict[int, list[Region]] = field(default_factory=dict)
    stored: dict[str, list[tuple[int, Region, Region]]] = field(default_factory=dict)
    views: dict[str, list[int]] = field(default_factory=dict)
    """Stitched parameter -> the values of its weights, in column order."""
    params: set[str] = field(default_factory=set)
    """The program's parameter names."""

    def error(self, node: int, message: str) -> BudaEmitError:
        return BudaEmitError(message, self.program.describe(node))

    # -- parameters and statements ----------------------------------------------------
    def run(self) -> TensorGraph:
        program = self.program
        if program.fragment:
            raise BudaEmitError(f"{program.name}: a fragment has no parameters and outputs to map to queues")
        params: dict[str, int] = {}
        self.params = {param.name for param in program.params}
        for param in program.params:
            if len(param.shape) != 2 or param.space != "hbm":
                raise BudaEmitError(
                    f"parameter {param.name!r} ({param.space}, shape {param.shape}): "
                    "only 2-D HBM parameters become queues"
                )
            params[param.name] = self._new(param.name, (param.shape[0], param.shape[1]))
        self._add_views()
        for node, stmt in program.items():
            name = stmt.op.name
            if name == "alloc":
                continue
            if name == "load":
                self._load(node, stmt, params)
            elif name == "store":
                self._store(node, stmt)
            else:
                self._compute(node, stmt)
        self._check_coverage()
        return with_consumers(tuple(self.values), self._outputs())

    def _new(self, name: str, shape: tuple[int, int], **fields: object) -> int:
        value_id = len(self.values)
        self.values.append(TensorValue(value_id, name, shape, **fields))  # type: ignore[arg-type]
        return value_id

    def _add_views(self) -> None:
        try:
            stitched = stitching_of(self.program)
        except StitchError as err:
            raise BudaEmitError(f"{self.program.name}: {err}") from None
        for param, metadata in stitched.items():
            self.views[param] = [
                self._new(
                    slot.name,
                    slot.original_shape,
                    view=WeightView(param, slot.name, (slot.col_start, slot.col_end)),
                )
                for slot in metadata.weights.values()
            ]

    def _load(self, node: int, stmt: Statement, params: dict[str, int]) -> None:
        src, dst = stmt.operands
        if src.var not in params:
            raise self.error(node, f"loads {src.var!r}, which is not a parameter")
        value, region = params[src.var], _region(src.slices)
        if src.var in self.views:
            value, region = self._weight_tile(node, src.var, region)
        self._write(node, dst.var, dst.slices, value, Placement(region))

    def _weight_tile(self, node: int, param: str, region: Region) -> tuple[int, Region]:
        """The weight of stitched ``param`` a load reads, and the region of it."""
        rows, (start, stop) = region
        weights = [(v, self.values[v]) for v in self.views[param]]
        for value_id, value in weights:
            col0, col1 = _columns(value)
            if col0 <= start and stop <= col1:
                if rows[1] > value.shape[0]:
                    raise self.error(
                        node,
                        f"loads rows {rows[0]}:{rows[1]} of weight {value.name!r} of {param}, "
                        f"which has {value.shape[0]} rows (the rest is zero padding)",
                    )
                return value_id, (rows, (start - col0, stop - col0))
        spans = [
            f"{v.name} {c0}:{c1}" for _, v in weights for c0, c1 in [_columns(v)] if c0 < stop and start < c1
        ]
        raise self.error(
            node, f"loads columns {start}:{stop} of stitched {param}, across its weights ({', '.join(spans)})"
        )

    def _store(self, node: int, stmt: Statement) -> None:
        src, dst = stmt.operands
        value, region = self._resolve(node, src.var, src.slices)
        if self.values[value].is_param:
            raise self.error(node, "stores a parameter unchanged; there is no op to compute it")
        self.stored.setdefault(dst.var, []).append((value, region, _region(dst.slices)))

    def _compute(self, node: int, stmt: Statement) -> None:
        op = stmt.op
        if self._combine(node, stmt):
            return
        rule = RULES.get(op.name)
        if rule is None:
            why = NOT_IN_BUDA.get(op.name, "has no tensor-level meaning for the Buda backend")
            raise self.error(node, f"op {op.name!r} {why}")
        reads = [self._resolve(node, o.var, o.slices) for o in (stmt.operands[p] for p in op.read_positions)]
        inputs = tuple(value for value, _ in reads)
        shapes = [self.values[v].shape for v in inputs]
        try:
            placement = rule([region for _, region in reads], shapes)
            shape = op.output_shape(shapes, stmt.attrs)
        except (ValueError, ShapeError) as err:
            raise self.error(node, f"not a tile of a tensor-level {op.name}: {err}") from None
        key = (op.name, stmt.attrs, inputs)
        value = self.keys.get(key)
        if value is None:
            label = f"{op.name}_{len(self.values)}"
            value = self.keys[key] = self._new(
                label,
                (shape[0], shape[1]),
                op=op,
                attrs=stmt.attrs,
                inputs=inputs,
                statement=self.program.describe(node),
            )
        dst = stmt.dst
        if stmt.accumulate:
            self._accumulate(node, dst.var, dst.slices, value, placement)
        else:
            self._write(node, dst.var, dst.slices, value, placement)

    def _combine(self, node: int, stmt: Statement) -> bool:
        """``tensor_tensor(maximum)`` of two partial max-reductions of one tile is a larger
        partial reduction (the tiler combines max/min chunks this way, sums with ``+=``)."""
        kind = COMBINES.get((stmt.op.name, stmt.attr("op")))
        if kind is None:
            return False
        parts = [self._partial(stmt.operands[p].var, stmt.operands[p].slices) for p in stmt.op.read_positions]
        if any(part is None for part in parts):
            return False
        pieces = [part for part in parts if part is not None]
        first = pieces[0]
        value = self.values[first.value]
        if value.attr_map.get("op") != kind or any(
            (p.value, p.region) != (first.value, first.region) for p in pieces
        ):
            return False
        chunks = [c for p in pieces for c in p.chunks]
        dst = stmt.dst
        self._write(node, dst.var, dst.slices, first.value, Placement(first.region), chunks, first.extent)
        return True

    def _partial(self, var: str, slices: Slices) -> _Piece | None:
        at = _region(slices)
        piece = next((p for p in self.pieces.get(var, ()) if p.at == at), None)
        if piece is None or _summed(piece):
            return None
        return piece

    # -- tile variables ---------------------------------------------------------------
    def _write(
        self,
        node: int,
        var: str,
        slices: Slices,
        value: int,
        placement: Placement,
        chunks: list[Range] | None = None,
        extent: int | None = None,
    ) -> None:
        """``var[slices]`` now holds ``placement.region`` of ``value`` (a partial sum over
        ``chunks`` of ``0:extent``, by default the placement's own chunk)."""
        at = _region(slices)
        pieces = self.pieces.setdefault(var, [])
        for piece in list(pieces):
            common = intersect(piece.at, at)
            if common is None:
                continue
            if common != piece.at:
                raise self.error(node, f"partly overwrites tile {var}{region_text(piece.at)}")
            pieces.remove(piece)
        if chunks is None:
            chunks = [placement.chunk] if placement.chunk is not None else []
        pieces.append(
            _Piece(at, value, placement.region, chunks, placement.extent if extent is None else extent)
        )
        self.written.setdefault(value, []).append(placement.region)

    def _accumulate(self, node: int, var: str, slices: Slices, value: int, placement: Placement) -> None:
        """Add ``placement.chunk`` to the partial sums held in ``var[slices]`` (splitting pieces
        where a merged tile accumulates part by part)."""
        if placement.chunk is None:
            raise self.error(node, "accumulates (+=) an op that sums over no axis")
        at = _region(slices)
        pieces = self.pieces.get(var, [])
        inside: list[_Piece] = []
        for piece in list(pieces):
            common = intersect(piece.at, at)
            if common is None:
                continue
            if common != piece.at:
                pieces.remove(piece)
                for part in subtract(piece.at, common):
                    pieces.append(_moved(piece, part))
                piece = _moved(piece, common)
                pieces.append(piece)
            inside.append(piece)
        for piece in inside:
            expected = offset(placement.region, piece.at, at)
            if piece.value != value or piece.region != expected:
                raise self.error(
                    node, "accumulates onto a tile that does not hold a partial sum of the same op and tile"
                )
            piece.chunks.append(placement.chunk)
        if sum(area(p.at) for p in inside) != area(at):
            raise self.error(node, f"accumulates onto {var}{region_text(at)}, which is not (fully) written")

    def _resolve(self, node: int, var: str, slices: Slices) -> tuple[int, Region]:
        at = _region(slices)
        if var in self.params:
            raise self.error(node, f"reads parameter {var!r} without loading it")
        pieces = self.pieces.get(var, ())
        for piece in pieces:  # most reads are of one whole tile as written (pieces never overlap)
            if piece.at == at and _summed(piece):
                return (piece.value, piece.region)
        found: tuple[int, Region] | None = None
        covered = 0
        for piece in pieces:
            common = intersect(piece.at, at)
            if common is None:
                continue
            if not _summed(piece):
                raise self.error(
                    node,
                    f"reads {var}, a partial sum of {self.values[piece.value].name} over chunks "
                    f"{sorted(piece.chunks)} of 0:{piece.extent}",
                )
            mapped = (piece.value, offset(piece.region, at, piece.at))
            if found is not None and mapped != found:
                raise self.error(
                    node, f"reads {var}{region_text(at)}, which spans tiles of different tensors"
                )
            found = mapped
            covered += area(common)
        if found is None or covered != area(at):
            raise self.error(node, f"reads {var}{region_text(at)}, which is not (fully) written")
        return found

    # -- whole tensors ----------------------------------------------------------------
    def _check_coverage(self) -> None:
        for value in self.values:
            if value.is_param:
                continue
            regions = self.written.get(value.id, [])
            if not tiles_exactly(regions, value.shape):
                raise BudaEmitError(
                    f"the tiles of {value.name} (shape {value.shape}) do not cover it exactly once: "
                    f"{', '.join(region_text(r) for r in sorted(set(regions)))}"
                )
            tile = Counter((r1 - r0, c1 - c0) for (r0, r1), (c0, c1) in regions).most_common(1)[0][0]
            self.values[value.id] = _with_tile(value, tile)

    def _outputs(self) -> dict[str, int]:
        outputs: dict[str, int] = {}
        for name in self.program.returns:
            stores = self.stored.get(name, [])
            shape = self.program.variables[name].shape
            sources = {value for value, _, _ in stores}
            if len(sources) != 1:
                found = ", ".join(sorted(self.values[v].name for v in sources)) or "nothing"
                raise BudaEmitError(
                    f"output {name!r} must hold exactly one computed tensor, it holds {found}"
                )
            value = sources.pop()
            moved = [(region, dst) for _, region, dst in stores if region != dst]
            if moved or self.values[value].shape != tuple(shape):
                raise BudaEmitError(
                    f"output {name!r} (shape {tuple(shape)}) is not a copy of {self.values[value].name} "
                    f"(shape {self.values[value].shape}) tile for tile"
                )
            if not tiles_exactly([dst for _, _, dst in stores], (shape[0], shape[1])):
                raise BudaEmitError(f"output {name!r} is not written exactly once everywhere")
            outputs[name] = value
        return outputs


def _summed(piece: _Piece) -> bool:
    """Whether ``piece`` holds its value whole: no partial sum, or one with every chunk added."""
    return not piece.extent or covers_once(piece.chunks, piece.extent)


def _moved(piece: _Piece, at: Region) -> _Piece:
    """The part of ``piece`` at ``at`` (inside ``piece.at``)."""
    return _Piece(at, piece.value, offset(piece.region, at, piece.at), list(piece.chunks), piece.extent)


def _columns(value: TensorValue) -> Range:
    assert value.view is not None
    return value.view.columns


def _region(slices: Slices) -> Region:
    if len(slices) != 2:
        raise BudaEmitError(f"slices {slices} are not 2-D")
    return (slices[0], slices[1])


def _with_tile(value: TensorValue, tile: tuple[int, int]) -> TensorValue:
    return replace(value, tile=tile)


def lift(program: Program) -> TensorGraph:
    """The tensor-level graph of ``program``; BudaEmitError names what cannot be lifted."""
    return _Lifter(program).run()
