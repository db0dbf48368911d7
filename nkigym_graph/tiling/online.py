"""Online softmax: a row maximum and the sums of exponentials it shifts, in one pass.

A softmax-style function takes a row maximum ``m = max_j x_j`` and then sums terms of
``e_j = exp(a * x_j - a * m)`` over the same row: a row sum ``l = sum_j e_j``, or a
product ``o = sum_j e_j^T v_j`` (attention's ``softmax(s) @ v``)::

    m = tensor_reduce(x, op="max")
    e = activation(x, op="exp", scale=a, bias=tensor_scalar(m, -a, op="multiply"))
    l = tensor_reduce(e, op="sum")                 # and/or
    o = nc_matmul(nc_transpose(e), v)

Tiled plainly, the maximum needs every chunk of the row before the first exponential.
Tiled online (``tile(..., online=True)``), one pass over the chunks keeps a running
maximum and rescales what was summed so far whenever it grows, so a row longer than
one tile is exact and each chunk is read once::

    m_0 = max(x_0)                         e_0 = exp(a x_0 - a m_0)     l_0 = sum(e_0)
    m_j = maximum(m_{j-1}, max(x_j))       e_j = exp(a x_j - a m_j)
    c_j = exp(a m_{j-1} - a m_j)           l_j = l_{j-1} * c_j + sum(e_j)
                                           o_j = o_{j-1} * c_j + e_j^T v_j

with ``m``, ``l`` and ``o`` the last ones. Anything else reading the exponentials (a
softmax's output ``e / l``) reads them computed from the final maximum, as before. A
chunk masked whole (a ``Filled`` tile of ``-inf``, :mod:`.masking`: causal attention
above the diagonal) adds nothing to any of them, so the pass skips it, and a step of
such chunks altogether (no rescale).

A step ``j`` covers as many tiles of the row as one matmul result holds (``nc_matmul``'s
``N`` limit on the target, 512 columns on Trn2), so the sums are rescaled once per
step, not once per tile; within a step its tiles' maxima fold and their terms add.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from nkigym_graph.ir.ops import (
    ACTIVATION_BIAS,
    NC_MATMUL,
    NC_TRANSPOSE,
    TENSOR_COLUMN,
    TENSOR_REDUCE,
    TENSOR_SCALAR,
    TENSOR_TENSOR,
)
from nkigym_graph.ir.ops.base import Op
from nkigym_graph.ir.statement import Attrs, Operand, Statement, make_attrs
from nkigym_graph.tiling.masking import Filled, Tile, operand
from nkigym_graph.tiling.trace import Call

if TYPE_CHECKING:
    from nkigym_graph.tiling.emit import TileFn, _Emitter

_new = tuple.__new__


class OnlineGroup(NamedTuple):
    """A row maximum and the sums over the same row its exponentials feed."""

    maximum: Call
    shift: Call
    """``-a * maximum``."""
    exponent: Call
    """``exp(a * x + shift)``."""
    scale: float
    sums: tuple[Call, ...]
    """``tensor_reduce(exponent, op="sum")``."""
    products: tuple[tuple[Call, Call], ...]
    """``(nc_transpose(exponent), nc_matmul(that, v))``."""


def find_online_groups(calls: tuple[Call, ...]) -> list[OnlineGroup]:
    """Every online group among ``calls`` (see the module docstring)."""
    readers: dict[Call, list[Call]] = {}
    for call in calls:
        for tensor in call.inputs:
            if isinstance(tensor.source, Call):
                readers.setdefault(tensor.source, []).append(call)
    groups = []
    for maximum in calls:
        if maximum.op is not TENSOR_REDUCE or dict(maximum.attrs).get("op") != "max":
            continue
        for shift in readers.get(maximum, ()):
            scale = _negated_scale(shift)
            if scale is None:
                continue
            for exponent in readers.get(shift, ()):
                if not _shifted_exponential(exponent, maximum, shift, scale):
                    continue
                group = _group(readers, maximum, shift, exponent, scale)
                if group is not None:
                    groups.append(group)
    return groups


def _negated_scale(shift: Call) -> float | None:
    """``a`` when ``shift`` is ``tensor_scalar(m, -a, op="multiply")`` with ``a > 0``."""
    attrs = dict(shift.attrs)
    if shift.op is not TENSOR_SCALAR or attrs.get("op") != "multiply":
        return None
    scalar = attrs.get("scalar")
    return -float(scalar) if isinstance(scalar, int | float) and scalar < 0 else None


def _shifted_exponential(exponent: Call, maximum: Call, shift: Call, scale: float) -> bool:
    """Whether ``exponent`` is ``exp(a * x + shift)`` of the row ``maximum`` reduced."""
    if exponent.op is not ACTIVATION_BIAS:
        return False
    values = exponent.op.attr_values(exponent.attrs)
    data, bias = exponent.inputs
    row = maximum.inputs[0]
    return (
        values["op"] == "exp"
        and float(values["scale"]) == scale
        and bias.source is shift
        and data.source is row.source
        and data.axes == row.axes
    )


def _group(
    readers: dict[Call, list[Call]], maximum: Call, shift: Call, exponent: Call, scale: float
) -> OnlineGroup | None:
    sums = tuple(
        r for r in readers.get(exponent, ()) if r.op is TENSOR_REDUCE and dict(r.attrs).get("op") == "sum"
    )
    products = tuple(
        (transpose, product)
        for transpose in readers.get(exponent, ())
        if transpose.op is NC_TRANSPOSE
        for product in readers.get(transpose, ())
        if product.op is NC_MATMUL and product.inputs[0].source is transpose
    )
    if not sums and not products:
        return None
    return OnlineGroup(maximum, shift, exponent, scale, sums, products)


def online_functions(emitter: _Emitter, group: OnlineGroup, step_columns: int) -> dict[Call, TileFn]:
    """Tile functions for the group's maximum, sums and products: the first one asked for
    a row block emits the whole pass over the row for all of them (see the module
    docstring), in steps of ``step_columns``; the others read what it computed."""
    pass_ = _OnlinePass(emitter, group, step_columns)
    out: dict[Call, TileFn] = {group.maximum: pass_.reader(group.maximum)}
    for call in group.sums:
        out[call] = pass_.reader(call)
    for _, product in group.products:
        out[product] = pass_.reader(product)
    return out


class _OnlinePass:
    def __init__(self, emitter: _Emitter, group: OnlineGroup, step_columns: int) -> None:
        self.emitter = emitter
        self.group = group
        self.results: dict[tuple[Call, int, int], Operand] = {}
        self.done: set[int] = set()
        row = group.maximum.inputs[0]
        self.row = row
        dimension = emitter.dims.dimension(row.axes[1])
        chunks = len(dimension.tiles)
        per_step = max(1, step_columns // dimension.tile)
        self.steps = [range(start, min(start + per_step, chunks)) for start in range(0, chunks, per_step)]
        self.column = emitter._whole(*emitter._dims_of(group.maximum.out_axes))
        self.chunk = emitter._whole(*emitter._dims_of(row.axes))
        self.exp_attrs = group.exponent.attrs
        masked = row.source in emitter.fillable
        self.floor = make_attrs(scalar=-3.0e38 / max(1.0, group.scale), op="maximum") if masked else None
        """A masked row's running maximum is kept finite (see ``_floored``)."""

    def reader(self, call: Call) -> TileFn:
        def tile(i0: int, i1: int) -> Tile:
            if i0 not in self.done:
                self.run(i0)
            return self.results[(call, i0, i1)]

        return tile

    def emit(
        self, op: Op, reads: tuple[Operand, ...], attrs: Attrs, slices: tuple, into: Operand | None = None
    ) -> Operand:
        dst = into if into is not None else _new(Operand, (self.emitter.next_name(), slices))
        self.emitter.statements.append(_new(Statement, (op, (*reads, dst), attrs, into is not None)))
        return dst

    def run(self, i0: int) -> None:
        group, emit = self.group, self.emit
        column = self.column[i0][0]
        functions = self.emitter.functions
        maximum: Operand | None = None
        sums: dict[Call, Operand] = {}
        products: dict[tuple[Call, int], Operand] = {}
        chunks = [[(j, functions[self.row.source](i0, j)) for j in step] for step in self.steps]
        kept = [[(j, x) for j, x in step if not self._adds_nothing(x)] for step in chunks]
        if not any(kept):  # nothing but masked chunks: computed as they are
            kept = [[(j, operand(x)) for j, x in step] for step in chunks]
        for taken in filter(None, kept):
            step = [j for j, _ in taken]
            rows = [operand(x) for _, x in taken]
            step_max: Operand | None = None
            for x in rows:
                part = emit(TENSOR_REDUCE, (x,), group.maximum.attrs, column)
                step_max = (
                    part if step_max is None else emit(TENSOR_TENSOR, (step_max, part), _MAXIMUM, column)
                )
            assert step_max is not None
            previous = maximum
            maximum = (
                step_max if previous is None else emit(TENSOR_TENSOR, (previous, step_max), _MAXIMUM, column)
            )
            maximum = self._floored(maximum, column)
            negated = emit(TENSOR_SCALAR, (maximum,), group.shift.attrs, column)
            rescale = (
                None
                if previous is None
                else emit(ACTIVATION_BIAS, (previous, negated), self.exp_attrs, column)
            )
            if rescale is not None:  # what was summed so far used the previous maximum
                for call, total in sums.items():
                    sums[call] = self._rescaled(total, rescale, column)
                for (product, dt), total in products.items():
                    products[(product, dt)] = self._rescaled(total, rescale, self._out(product)[i0][dt])
            for j, x in zip(step, rows, strict=True):
                e = emit(ACTIVATION_BIAS, (x, negated), self.exp_attrs, self.chunk[i0][j])
                for call in group.sums:
                    sums[call] = self._add(call, (e,), column, sums.get(call))
                for transpose, product in group.products:
                    t = emit(NC_TRANSPOSE, (e,), transpose.attrs, _swap(self.chunk[i0][j]))
                    v_fn = functions[product.inputs[1].source]
                    out = self._out(product)
                    for dt in range(len(out[i0])):
                        key = (product, dt)
                        products[key] = self._add(
                            product, (t, operand(v_fn(j, dt))), out[i0][dt], products.get(key)
                        )
        assert maximum is not None
        self.results[(group.maximum, i0, 0)] = maximum
        for call, value in sums.items():
            self.results[(call, i0, 0)] = value
        for (call, dt), value in products.items():
            self.results[(call, i0, dt)] = value
        self.done.add(i0)

    def _floored(self, maximum: Operand, column: tuple) -> Operand:
        """A masked row's running maximum, at least ``-3e38 / a``: a row whose chunks so far
        are all ``-inf`` would otherwise shift its exponentials by ``+inf`` (``exp(-inf +
        inf)`` is nan, where the exact result is 0). Any finite maximum passes unchanged,
        and ``a`` times the floor stays finite in fp32."""
        if self.floor is None:
            return maximum
        return self.emit(TENSOR_SCALAR, (maximum,), self.floor, column)

    def _adds_nothing(self, tile: Tile) -> bool:
        """Whether a chunk is ``Filled`` with a value that neither raises the maximum nor
        adds to the sums (its exponential is 0)."""
        if not isinstance(tile, Filled):
            return False
        group = self.group
        peak = group.maximum.op.constant_result(group.maximum.attrs, 0, tile.value)
        term = group.exponent.op.constant_result(group.exponent.attrs, 0, tile.value)
        return peak == float("-inf") and term == 0.0

    def _rescaled(self, total: Operand, rescale: Operand, slices: tuple) -> Operand:
        """The running total multiplied by the step's rescale (a new tile)."""
        return self.emit(TENSOR_COLUMN, (total, rescale), _MULTIPLY, slices)

    def _out(self, product: Call) -> list[list[tuple]]:
        """The whole-tile slices of ``product``'s result tiles."""
        return self.emitter._whole(*self.emitter._dims_of(product.out_axes))

    def _add(self, call: Call, reads: tuple[Operand, ...], slices: tuple, total: Operand | None) -> Operand:
        """The first term, or ``+=`` one more onto the running total."""
        return self.emit(call.op, reads, call.attrs, slices, into=total)


_MAXIMUM = make_attrs(op="maximum")
_MULTIPLY = make_attrs(op="multiply")


def _swap(slices: tuple) -> tuple:
    return (slices[1], slices[0])
