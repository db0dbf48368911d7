"""Finding affine boxes in a sequence of integer vectors.

Blocks of repeated code differ only in their integer constants; block ``j`` has the
vector ``v[j]``. A *box* is a run of blocks whose vectors are affine in one loop index
(1-D: ``v[s + b] = v[s] + b * d_inner``) or in two nested ones (2-D: ``v[s + a*n + b]
= v[s] + a * d_outer + b * d_inner``, ``n`` blocks per row). A component with a
modulus (a rotating pool's slot index) need only be affine modulo it: slots
``2, 3, 0, 1`` of four are ``(b + 2) % 4``, and its steps are reported in
``[0, modulus)``. Boxes are chosen greedily by the lines they save (two repetitions
only for blocks of a few lines), then the rest of the sequence on either side is
searched again.

>>> [(b.start, b.inner, b.outer) for b in find_boxes([[0], [5], [1], [2], [3], [4]], 2)]
[(2, 4, 1)]
>>> [(b.start, b.inner, b.d_inner) for b in find_boxes([[0], [2], [3], [0], [1]], 2, moduli=[4])]
[(1, 4, (1,))]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

Vector = np.ndarray

MIN_PAIR_LINES = 3
"""Two repetitions become a loop only when a block has at least this many lines."""


@dataclass(frozen=True)
class Box:
    """Blocks ``start .. start + inner * outer - 1`` as ``outer`` rows of ``inner`` blocks."""

    start: int
    inner: int
    outer: int
    d_inner: tuple[int, ...]
    d_outer: tuple[int, ...]
    saved: int
    """Lines saved by rolling (unrolled lines minus rolled lines)."""
    nonzeros: int
    """Constants that vary (fewer means a simpler loop; breaks ties)."""

    @property
    def count(self) -> int:
        return self.inner * self.outer


def find_boxes(vectors: Sequence[Sequence[int]], block_lines: int, moduli: Sequence[int] = ()) -> list[Box]:
    """Non-overlapping boxes that save lines, in order of ``start``; ``moduli`` (one per
    component, 0 for none) are the moduli components are compared in."""
    if not vectors:
        return []
    array = np.asarray(vectors, dtype=np.int64).reshape(len(vectors), -1)
    wrap = _Wrap(np.asarray(moduli, dtype=np.int64)) if any(moduli) else None
    return _boxes(array, 0, len(array), block_lines, wrap)


class _Wrap:
    """Reduces the components that have a modulus (differences of slot indices)."""

    def __init__(self, moduli: Vector) -> None:
        self.mask = moduli > 0
        self.moduli = moduli[self.mask]

    def __call__(self, diffs: Vector) -> Vector:
        diffs = diffs.copy()
        diffs[..., self.mask] %= self.moduli
        return diffs


def _boxes(array: Vector, lo: int, hi: int, lines: int, wrap: _Wrap | None) -> list[Box]:
    best = _best_box(array[lo:hi], lines, wrap)
    if best is None:
        return []
    box = replace(best, start=best.start + lo)
    before = _boxes(array, lo, box.start, lines, wrap)
    return [*before, box, *_boxes(array, box.start + box.count, hi, lines, wrap)]


def _arithmetic_lengths(diffs: Vector, count: int) -> list[int]:
    """``length[i]``: how many blocks from ``i`` on form one arithmetic progression."""
    same = np.all(diffs[1:] == diffs[:-1], axis=1).tolist()  # same[i]: diffs[i] == diffs[i + 1]
    length = [1] * count
    if count >= 2:
        length[count - 2] = 2
    for i in range(count - 3, -1, -1):
        length[i] = length[i + 1] + 1 if same[i] else 2
    return length


def _make(start: int, inner: int, outer: int, d_inner: Vector, d_outer: Vector, lines: int) -> Box:
    loops = 1 if outer == 1 else 2
    return Box(
        start,
        inner,
        outer,
        tuple(int(x) for x in d_inner),
        tuple(int(x) for x in d_outer),
        (inner * outer - 1) * lines - loops,
        int(np.count_nonzero(d_inner) + np.count_nonzero(d_outer)),
    )


Rank = tuple[int, int, int, int]
"""How a box ranks: lines saved, one loop before two, fewer varying constants, earlier start."""
Candidate = tuple[Rank, int, int, int, Vector, Vector]
"""A box not yet made: its rank, start, inner and outer counts, ``d_inner`` and ``d_outer``."""


def _best_box(v: Vector, lines: int, wrap: _Wrap | None) -> Box | None:
    """The box that saves most lines among the vectors ``v`` (the first of the best, in
    the order 1-D boxes by start, then 2-D boxes by row width and start), if worth a loop."""
    count = len(v)
    if count < 2:
        return None
    diffs = np.diff(v, axis=0)
    if wrap is not None:
        diffs = wrap(diffs)
    length = _arithmetic_lengths(diffs, count)
    best: Candidate | None = None
    for candidate in _row_boxes(diffs, length, lines):
        if best is None or candidate[0] > best[0]:
            best = candidate
    for width in sorted({length[i] for i in range(count - 1)}):
        if 2 * width > count:
            break  # no two rows of this width fit
        for candidate in _grid_boxes(v, diffs, length, width, lines, wrap):
            if best is None or candidate[0] > best[0]:
                best = candidate
    assert best is not None  # (block 0 starts a 1-D box)
    box = _make(*best[1:], lines)
    worth = box.saved > 0 and (box.count >= 3 or lines >= MIN_PAIR_LINES)
    return box if worth else None


def _row_boxes(diffs: Vector, length: list[int], lines: int) -> Iterator[Candidate]:
    """The 1-D boxes: each maximal arithmetic progression, by start."""
    nonzeros = np.count_nonzero(diffs, axis=1).tolist()
    zero = np.zeros(diffs.shape[1], dtype=np.int64)
    for i in range(len(length) - 1):
        if i == 0 or length[i - 1] != length[i] + 1:
            yield ((length[i] - 1) * lines - 1, 0, -nonzeros[i], -i), i, length[i], 1, diffs[i], zero


def _grid_boxes(
    v: Vector, diffs: Vector, length: list[int], width: int, lines: int, wrap: _Wrap | None
) -> Iterator[Candidate]:
    """The 2-D boxes with rows of ``width`` blocks (``2 * width <= count``), by start: from
    each block that starts a progression of ``width`` blocks, the most rows that follow,
    each a progression with the same steps that starts the same step ``d_outer`` after the
    row before. Whether a row can follow another depends only on the two (and the step
    on the row before them), so the rows are counted once per block, from the end."""
    count = len(v)
    last = count - width  # the last block a row can start at
    # follows[r - width]: a row can start at block r after a row at r - width (r <= last)
    follows = (np.asarray(length[width : last + 1]) >= width) & np.all(
        diffs[width : last + 1] == diffs[: last + 1 - width], axis=1
    )
    steps = v[width:] - v[:-width]  # steps[r - width]: from block r - width to block r
    if wrap is not None:
        steps = wrap(steps)
    # same_step[r - 2 * width]: the step to block r is the step to block r - width
    pairs = max(0, last + 1 - 2 * width)
    same_step = np.all(steps[width : width + pairs] == steps[:pairs], axis=1).tolist()
    row_after = follows.tolist()
    more = [0] * (count + 1)  # more[r]: rows that follow from block r on, after two rows
    for r in range(last, 2 * width - 1, -1):
        if row_after[r - width] and same_step[r - 2 * width]:
            more[r] = 1 + more[r + width]
    nonzeros = np.count_nonzero(diffs, axis=1)
    step_nonzeros = np.count_nonzero(steps, axis=1)
    for start in range(count - 2 * width + 1):
        if length[start] < width or not row_after[start]:
            continue
        outer = 2 + more[start + 2 * width]
        rank = ((width * outer - 1) * lines - 2, -1, -int(nonzeros[start] + step_nonzeros[start]), -start)
        yield rank, start, width, outer, diffs[start], steps[start]
