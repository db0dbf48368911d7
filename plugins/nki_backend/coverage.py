"""Whether a set of regions covers a whole tensor, without a mask of the tensor's size.

The regions' boundaries cut each axis into intervals; a region covers whole cells of
that grid, so a mask over cells (a tiled output's store grid: a few per axis) answers
exactly what an element mask would, at the size of the grid rather than the tensor.

>>> covers((256, 256), [((0, 128), (0, 256)), ((128, 256), (0, 256))])
True
>>> covers((256, 256), [((0, 128), (0, 256)), ((64, 192), (0, 256))])
False
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

import numpy as np

Region = Sequence[tuple[int, int]]


def covers(shape: Sequence[int], regions: Iterable[Region]) -> bool:
    """Whether the union of ``regions`` is the whole of a tensor of ``shape``."""
    distinct = set(map(tuple, regions))
    if sum(_volume(r) for r in distinct) < _volume([(0, n) for n in shape]):
        return False
    cuts = [sorted({0, n, *(b for r in distinct for b in r[axis])}) for axis, n in enumerate(shape)]
    covered = np.zeros(tuple(len(c) - 1 for c in cuts), dtype=bool)
    for region in distinct:
        cells = tuple(
            slice(bisect_left(c, start), bisect_left(c, stop))
            for c, (start, stop) in zip(cuts, region, strict=True)
        )
        covered[cells] = True
    return bool(covered.all())


def _volume(region: Region) -> int:
    size = 1
    for start, stop in region:
        size *= stop - start
    return size
