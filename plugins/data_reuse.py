"""``data_reuse``: loads of the same region of the same source collapse to one;
readers of the others read it instead.

Before::

    tensor_0 = a[0:128, 0:128]
    tensor_1 = b[0:128, 0:128]
    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    tensor_3 = a[0:128, 0:128]
    tensor_4 = b[0:128, 128:256]
    tensor_5 = nkigym.nc_matmul(tensor_3, tensor_4)

After (``tensor_3`` replaced by ``tensor_0``)::

    tensor_0 = a[0:128, 0:128]
    tensor_1 = b[0:128, 0:128]
    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    tensor_4 = b[0:128, 128:256]
    tensor_5 = nkigym.nc_matmul(tensor_0, tensor_4)

An equal pattern over loads and ``dedupe``. Each match of ``analyze`` absorbs a load
into the previous load of its region, so a batch of non-conflicting matches halves the
loads of every region while keeping each tile live only until the next use (what a
search steps through, doubling reuse while on-chip memory allows); ``analyze_batch``
absorbs every load of a region into the first at once (what saturation applies).
"""

from __future__ import annotations

from nkigym_graph import hookimpl
from nkigym_graph.ir.program import Program
from nkigym_graph.rewriting.patterns import EqualPattern, Found, PatternTransform, dedupe
from nkigym_graph.rewriting.transform import Edit, Transform


class DataReuse(PatternTransform):
    """Loads of the same region of one source collapse to one; its readers share it."""

    name = "data_reuse"
    pattern = EqualPattern("load")
    edits_every_match = True

    def edit(self, program: Program, found: Found) -> Edit | None:
        return dedupe(program, *found.nodes)

    def describe(self, program: Program, found: Found) -> str:
        keeper, *duplicates = (program[node].dst.var for node in found.nodes)
        return f"{', '.join(duplicates)} {'is' if len(duplicates) == 1 else 'are'} {keeper}"


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [DataReuse]
