"""``affine_select``: keep a tile's elements where an affine predicate of their position
holds, a fill value elsewhere (NKI's ``nisa.affine_select``, on the GpSimd Engine).

For element ``[i, j]`` (partition ``i``, free index ``j``) of the tile the statement
reads::

    keep  <=>  cmp(offset + channel_multiplier * i + step * j, 0)

The defaults are the causal mask: ``affine_select(scores)`` keeps ``scores[i, j]`` where
``i - j >= 0`` (a query attends to keys at or before it) and writes ``-inf`` above the
diagonal; ``offset=k`` keeps ``j <= i + k``.

>>> import numpy as np
>>> AFFINE_SELECT.compute([np.ones((3, 3))], {})
array([[  1., -inf, -inf],
       [  1.,   1., -inf],
       [  1.,   1.,   1.]])

Indexes are the statement's own: a tile cut from a larger tensor at rows ``r0`` and
columns ``c0`` keeps the tensor's predicate with ``offset + channel_multiplier * r0 +
step * c0`` (``tile_attrs``). Because the expression is affine, its extremes over a
tile are at the tile's corners, so ``coverage`` says whether a tile keeps everything,
nothing or part of it: tiling needs no mask instruction for the first and skips the
second (``nkigym_graph.tiling.masking``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from nkigym_graph.ir.ops.base import Op, ShapeError
from nkigym_graph.ir.statement import Attrs, make_attrs

TILE = ("partition", "free")

COMPARISONS: Mapping[str, Any] = {
    "greater_equal": np.greater_equal,
    "greater": np.greater,
    "less_equal": np.less_equal,
    "less": np.less,
}
"""The predicates ``cmp`` names: ``cmp(value, 0)``."""

ALL, NONE, SOME = "all", "none", "some"
"""What ``coverage`` says of a region: every element is kept, none is, or some are."""


class AffineSelectOp(Op):
    """``nkigym.affine_select(data, offset=0, channel_multiplier=1, step=-1,
    cmp="greater_equal", fill=float("-inf"))`` (see the module docstring)."""

    name = "affine_select"
    operand_names = ("data", "dst")
    read_positions = (0,)
    write_positions = (1,)
    axes = (TILE, TILE)
    keyword_attrs = ("offset", "channel_multiplier", "step", "cmp", "fill")
    attr_choices: ClassVar[Mapping[str, Mapping[str, Any]]] = {"cmp": COMPARISONS}
    attr_defaults: ClassVar[Mapping[str, Any]] = {
        "offset": 0,
        "channel_multiplier": 1,
        "step": -1,
        "cmp": "greater_equal",
        "fill": float("-inf"),
    }
    number_attrs = frozenset({"fill"})
    integer_attrs = ("offset", "channel_multiplier", "step")
    engine = "gpsimd"
    on_chip_positions = (0, 1)

    def canonical_attrs(self, attrs: Attrs) -> Attrs:
        """Without the attributes equal to their defaults (``cmp`` too, a name)."""
        return tuple(
            (k, v)
            for k, v in super().canonical_attrs(attrs)
            if not (k == "cmp" and v == self.attr_defaults[k])
        )

    def check_attrs(self, attrs: Attrs) -> str | None:
        problem = super().check_attrs(attrs)
        if problem is not None:
            return problem
        for key, value in attrs:
            if key in self.integer_attrs and (isinstance(value, bool) or not isinstance(value, int)):
                return f"{key} must be an integer, got {value!r}"
        return None

    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        (shape,) = read_shapes
        if len(shape) != 2:
            raise ShapeError(f"affine_select takes a 2-D tile, got {shape}")
        return shape

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        values = self.attr_values(tuple(attrs.items()))
        data = np.asarray(inputs[0])
        rows, cols = data.shape
        keep = self.predicate(values, np.arange(rows)[:, None], np.arange(cols)[None, :])
        return np.where(keep, data, np.asarray(values["fill"], dtype=data.dtype))

    def constant_result(self, attrs: Attrs, position: int, value: float) -> float | None:
        fill = float(self.attr_values(attrs)["fill"])
        return value if value == fill else None

    # -- position ---------------------------------------------------------------------
    @staticmethod
    def predicate(values: Mapping[str, Any], rows: Any, cols: Any) -> Any:
        """Whether elements at ``rows`` and ``cols`` (broadcasting arrays) are kept."""
        affine = values["offset"] + values["channel_multiplier"] * rows + values["step"] * cols
        return COMPARISONS[values["cmp"]](affine, 0)

    def tile_attrs(self, attrs: Attrs, row: int, col: int) -> Attrs:
        """The attributes of the statement masking the tile at ``(row, col)`` of the tensor
        ``attrs`` mask: the same predicate, offset to the tile's first element."""
        values = self.attr_values(attrs)
        shifted = values["offset"] + values["channel_multiplier"] * row + values["step"] * col
        return self.canonical_attrs(make_attrs(**{**values, "offset": shifted}))

    def coverage(self, attrs: Attrs, rows: tuple[int, int], cols: tuple[int, int]) -> str:
        """``ALL``, ``NONE`` or ``SOME``: which elements of the region ``rows`` x ``cols``
        (ranges, stop excluded) the mask ``attrs`` keeps (decided at the region's corners)."""
        values = self.attr_values(attrs)
        corners = [
            self.predicate(values, r, c) for r in (rows[0], rows[1] - 1) for c in (cols[0], cols[1] - 1)
        ]
        return ALL if all(corners) else NONE if not any(corners) else SOME


AFFINE_SELECT = AffineSelectOp()
