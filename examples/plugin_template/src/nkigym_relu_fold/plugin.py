"""``relu_fold``: an activation ``relu`` applied to the result of another ``relu`` on the
same region is dropped; its readers read the inner result.

Before::

    tensor_2 = nkigym.activation(tensor_1, op="relu")
    tensor_3 = nkigym.activation(tensor_2, op="relu")
    output[0:128, 0:128] = tensor_3

After::

    tensor_2 = nkigym.activation(tensor_1, op="relu")
    output[0:128, 0:128] = tensor_2
"""

from __future__ import annotations

import nkigym_graph
from nkigym_graph import Edit, Match, Program, Transform
from nkigym_graph.rewriting.transform import Rename


class ReluFold(Transform):
    """relu(relu(x)) -> relu(x)."""

    name = "relu_fold"

    def analyze(self, program: Program) -> list[Match]:
        matches = []
        for node in program.statements_of("activation"):  # the index, not a scan
            outer = program.statements[node]
            if outer.attr("op") != "relu":
                continue
            for source, _position in program.producers(node):
                inner = program.statements[source]
                same_region = inner.dst.slices == outer.operands[0].slices
                if inner.op.name == "activation" and inner.attr("op") == "relu" and same_region:
                    edit = Edit(remove=frozenset({node}), renames={outer.dst.var: Rename(inner.dst.var)})
                    matches.append(
                        Match(
                            self.name,
                            (source, node),
                            edit,
                            detail=f"{outer.dst.var} is {inner.dst.var}",
                            program_hash=program.canonical_hash,
                        )
                    )
        return matches


@nkigym_graph.hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [ReluFold]
