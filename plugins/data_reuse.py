"""``data_reuse``: loads of the same region of the same source collapse to the first;
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

Found through the index of loads by source: grouping by region, linear.
"""

from __future__ import annotations

from nkigym_graph import hookimpl
from nkigym_graph.program import Program
from nkigym_graph.transform import Edit, Match, Rename, Transform


class DataReuse(Transform):
    """Loads of the same region of one source collapse to one; its readers share it."""

    name = "data_reuse"

    def analyze(self, program: Program) -> list[Match]:
        statements = program.statements
        matches = []
        for source in sorted(program.index.loads_by_source):
            first_of: dict[tuple, int] = {}
            for node in program.loads_of(source):
                src, dst = statements[node].operands
                if len(program.writers_of(dst.var)) != 1:
                    continue  # a tile written again later is not a pure copy
                key = (src.slices, dst.slices)
                keeper = first_of.setdefault(key, node)
                if keeper != node:
                    matches.append(self._match(program, keeper, node))
        return matches

    def _match(self, program: Program, keeper: int, duplicate: int) -> Match:
        keep_var = program.statements[keeper].dst.var
        dup_var = program.statements[duplicate].dst.var
        return Match(
            transform=self.name,
            nodes=(keeper, duplicate),
            edit=Edit(absorb={duplicate: keeper}, renames={dup_var: Rename(keep_var)}),
            reads=frozenset({keeper}),
            detail=f"{dup_var} is {keep_var}",
            program_hash=program.canonical_hash,
        )


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [DataReuse]
