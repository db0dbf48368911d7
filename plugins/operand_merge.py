"""``operand_merge`` (seed 000): two statements of one op that differ in a single
operand, adjacent along one axis, become one wider statement.

Before::

    tensor_2 = nkigym.nc_matmul(tensor_0[0:128, 0:128], tensor_1[0:128, 0:128])
    output[0:128, 0:128] = tensor_2
    tensor_5 = nkigym.nc_matmul(tensor_0[0:128, 0:128], tensor_1[0:128, 128:256])
    output[0:128, 128:256] = tensor_5

After (N = 256, ``tensor_5`` absorbed into ``tensor_2``)::

    tensor_2 = nkigym.nc_matmul(tensor_0[0:128, 0:128], tensor_1[0:128, 0:256])
    output[0:128, 0:128] = tensor_2[0:128, 0:128]
    output[0:128, 128:256] = tensor_2[0:128, 128:256]

Applies to every op with mergeable axes (loads, stores, matmuls on M or N, elementwise
ops, reductions along the partition axis) within the op's limits on the program's
target; the rules are in ``nkigym_graph_plugins.merging.merge``.
"""

from __future__ import annotations

from nkigym_graph import hookimpl
from nkigym_graph.rewriting.transform import Transform

from .merging.merge_transform import MergeTransform


class OperandMerge(MergeTransform):
    """Merge same-op statements adjacent along one axis into one wider statement (seed 000)."""

    name = "operand_merge"


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [OperandMerge]
