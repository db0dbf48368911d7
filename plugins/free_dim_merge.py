"""``free_dim_merge`` (seed 001): adjacent loads of one source along the free axis
become one wider load; the matmuls that read them slice into it.

Before::

    tensor_1 = b[0:128, 0:128]
    tensor_4 = b[0:128, 128:256]

After (``tensor_4`` absorbed into ``tensor_1``)::

    tensor_1 = b[0:128, 0:256]

Same machinery as ``operand_merge``, restricted to loads along ``free``.
"""

from __future__ import annotations

from nkigym_graph import hookimpl
from nkigym_graph.rewriting.patterns import SetPattern
from nkigym_graph.rewriting.transform import Transform

from .merging.merge_transform import MergeTransform


class FreeDimMerge(MergeTransform):
    """Merge loads adjacent along the free axis into one wider load (seed 001)."""

    name = "free_dim_merge"
    pattern = SetPattern("load", axis="free")


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [FreeDimMerge]
