"""``dead_code``: statements whose results nobody reads are removed.

Before::

    tensor_0 = a[0:128, 0:128]
    tensor_1 = a[0:128, 128:256]     # never read
    tensor_2 = nkigym.activation(tensor_0, op="exp")
    output[0:128, 0:128] = tensor_2

After::

    tensor_0 = a[0:128, 0:128]
    tensor_2 = nkigym.activation(tensor_0, op="exp")
    output[0:128, 0:128] = tensor_2

A statement is dead when every variable it writes is an on-chip tile that is neither
read nor returned. Writes to outputs are never dead. Fragments (statement lists
without a return) are left alone: what they compute is their result.
"""

from __future__ import annotations

from nkigym_graph import hookimpl
from nkigym_graph.program import Program
from nkigym_graph.transform import Edit, Match, Transform


class DeadCode(Transform):
    """Remove statements whose results nobody reads."""

    name = "dead_code"

    def analyze(self, program: Program) -> list[Match]:
        if program.fragment:
            return []
        live = set(program.returns)
        matches = []
        for node, stmt in enumerate(program.statements):
            written = [stmt.operands[p].var for p in stmt.op.write_positions]
            if any(program.variables[v].external or v in live or program.consumers_of(v) for v in written):
                continue
            matches.append(
                Match(
                    self.name,
                    (node,),
                    Edit(remove=frozenset({node})),
                    detail=f"{', '.join(written)} is never read",
                    program_hash=program.canonical_hash,
                )
            )
        return matches


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [DeadCode]
