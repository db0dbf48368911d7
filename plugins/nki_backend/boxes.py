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

from collections.abc import Sequence
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
    length = [1] * count
    if count >= 2:
        length[count - 2] = 2
    for i in range(count - 3, -1, -1):
        length[i] = length[i + 1] + 1 if np.array_equal(diffs[i], diffs[i + 1]) else 2
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


def _best_box(v: Vector, lines: int, wrap: _Wrap | None) -> Box | None:
    count = len(v)
    if count < 2:
        return None
    diffs = np.diff(v, axis=0)
    if wrap is not None:
        diffs = wrap(diffs)
    length = _arithmetic_lengths(diffs, count)
    zero = np.zeros(v.shape[1], dtype=np.int64)
    starts = [i for i in range(count - 1) if i == 0 or length[i - 1] != length[i] + 1]
    candidates = [_make(i, length[i], 1, diffs[i], zero, lines) for i in starts]
    for width in sorted({length[i] for i in range(count - 1)}):
        for start in range(count - 2 * width + 1):
            if length[start] < width:
                continue
            rows, d_outer = 1, None
            while start + (rows + 1) * width <= count:
                row = start + rows * width
                if length[row] < width or not np.array_equal(diffs[row], diffs[start]):
                    break
                step = v[row] - v[row - width]
                if wrap is not None:
                    step = wrap(step)
                if d_outer is not None and not np.array_equal(step, d_outer):
                    break
                d_outer = step
                rows += 1
            if rows >= 2 and d_outer is not None:
                candidates.append(_make(start, width, rows, diffs[start], d_outer, lines))
    best = max(candidates, key=lambda b: (b.saved, -(b.outer > 1), -b.nonzeros, -b.start))
    worth = best.saved > 0 and (best.count >= 3 or lines >= MIN_PAIR_LINES)
    return best if worth else None
