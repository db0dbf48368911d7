"""Where one tiled statement writes inside the logical tensor it computes.

Given the regions its operands cover in their own logical tensors, each op's rule returns
the region it writes in its result and, for ops that sum over an axis in chunks
(``nc_matmul`` over K, ``tensor_reduce`` over the free axis), the chunk of that axis it
covers and the axis's full extent. A rule raises ``ValueError`` when the operands are not
the same tile of their tensors (so the statement is not part of a tensor-level op).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from nkigym_graph.ir.slices import Range

Region = tuple[Range, Range]
Shape = tuple[int, int]


class Placement(NamedTuple):
    """The region a statement writes, and the contraction chunk it adds (if any)."""

    region: Region
    chunk: Range | None = None
    extent: int = 0
    """Full size of the contracted axis (0 when the op contracts nothing)."""


Rule = Callable[[Sequence[Region], Sequence[Shape]], Placement]


def _elementwise(regions: Sequence[Region], shapes: Sequence[Shape]) -> Placement:
    first = regions[0]
    for other in regions[1:]:
        if other != first:
            raise ValueError(f"operands cover different tiles {_text(first)} and {_text(other)}")
    return Placement(first)


def _spread(dim: int) -> Rule:
    """Data and a broadcast operand (a column for ``dim`` 1, a row for ``dim`` 0): the
    operand covers the data's tile along the other axis, and ``0:1`` along ``dim``."""

    def rule(regions: Sequence[Region], shapes: Sequence[Shape]) -> Placement:
        data, other = regions
        expected = tuple((0, 1) if d == dim else data[d] for d in range(2))
        if other != expected:
            raise ValueError(f"the broadcast operand covers {_text(other)}, not {_text(expected)}")  # type: ignore[arg-type]
        return Placement(data)

    return rule


def _matmul(regions: Sequence[Region], shapes: Sequence[Shape]) -> Placement:
    (k, m), (k2, n) = regions
    if k != k2:
        raise ValueError(f"lhs covers K {k[0]}:{k[1]} but rhs covers K {k2[0]}:{k2[1]}")
    return Placement((m, n), k, shapes[0][0])


def _transpose(regions: Sequence[Region], shapes: Sequence[Shape]) -> Placement:
    rows, cols = regions[0]
    return Placement((cols, rows))


def _reduce(regions: Sequence[Region], shapes: Sequence[Shape]) -> Placement:
    rows, cols = regions[0]
    return Placement((rows, (0, 1)), cols, shapes[0][1])


RULES: dict[str, Rule] = {
    "activation": _elementwise,  # same tile in, same tile out
    "tensor_tensor": _elementwise,
    "tensor_scalar": _elementwise,
    "activation_bias": _spread(1),  # data tile, and the rows' [r, 0:1] of the column
    "tensor_column": _spread(1),
    "tensor_row": _spread(0),  # data tile, and the columns' [0:1, c] of the row
    "nc_matmul": _matmul,  # lhs[k, m], rhs[k, n] -> out[m, n], partial sum over k
    "nc_transpose": _transpose,  # [r, c] -> [c, r]
    "tensor_reduce": _reduce,  # [p, f] -> [p, 0:1], partial reduction over f
}
"""Region rule per op name; an op without one has no tensor-level meaning here."""


def _text(region: Region) -> str:
    return ", ".join(f"{a}:{b}" for a, b in region)


def region_text(region: Region) -> str:
    """``[0:32, 64:96]``."""
    return f"[{_text(region)}]"


def offset(region: Region, inner: Region, base: Region) -> Region:
    """``inner`` (a sub-region of ``base`` in the same coordinates) moved onto ``region``.

    >>> offset(((0, 32), (64, 96)), ((40, 50), (8, 16)), ((32, 64), (0, 32)))
    ((8, 18), (72, 80))
    """
    (r0, _), (c0, _) = region
    (i0, i1), (j0, j1) = inner
    (b0, _), (d0, _) = base
    return ((r0 + i0 - b0, r0 + i1 - b0), (c0 + j0 - d0, c0 + j1 - d0))


def intersect(a: Region, b: Region) -> Region | None:
    """The common part of two regions, or None.

    >>> intersect(((0, 32), (0, 64)), ((16, 48), (32, 96)))
    ((16, 32), (32, 64))
    >>> intersect(((0, 32), (0, 32)), ((32, 64), (0, 32))) is None  # they only touch
    True
    """
    (a0, a1), (c0, c1) = a
    (b0, b1), (d0, d1) = b
    rows = (max(a0, b0), min(a1, b1))
    cols = (max(c0, d0), min(c1, d1))
    return (rows, cols) if rows[0] < rows[1] and cols[0] < cols[1] else None


def subtract(outer: Region, inner: Region) -> list[Region]:
    """``outer`` minus ``inner`` (inside it) as up to four rectangles."""
    (r0, r1), (c0, c1) = outer
    (i0, i1), (j0, j1) = inner
    parts = [((r0, i0), (c0, c1)), ((i1, r1), (c0, c1)), ((i0, i1), (c0, j0)), ((i0, i1), (j1, c1))]
    return [p for p in parts if p[0][0] < p[0][1] and p[1][0] < p[1][1]]


def area(region: Region) -> int:
    (r0, r1), (c0, c1) = region
    return (r1 - r0) * (c1 - c0)


def covers_once(ranges: Sequence[Range], extent: int) -> bool:
    """Whether ``ranges`` partition ``0:extent`` (no gap, no overlap)."""
    position = 0
    for start, stop in sorted(ranges):
        if start != position:
            return False
        position = stop
    return position == extent


def tiles_exactly(regions: Sequence[Region], shape: Shape) -> bool:
    """Whether distinct ``regions`` cover ``shape`` exactly once (equal regions count once)."""
    distinct = sorted(set(regions))
    rows = sorted({0, shape[0], *(b for (r, _) in distinct for b in r)})
    cols = sorted({0, shape[1], *(b for (_, c) in distinct for b in c)})
    if rows[-1] != shape[0] or cols[-1] != shape[1] or rows[0] < 0 or cols[0] < 0:
        return False
    count = [[0] * (len(cols) - 1) for _ in range(len(rows) - 1)]
    for (r0, r1), (c0, c1) in distinct:
        for i in range(rows.index(r0), rows.index(r1)):
            for j in range(cols.index(c0), cols.index(c1)):
                count[i][j] += 1
    return all(c == 1 for row in count for c in row)
