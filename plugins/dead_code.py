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
from nkigym_graph.ir.program import Program
from nkigym_graph.rewriting.patterns import Found, Pattern, PatternTransform, remove
from nkigym_graph.rewriting.transform import Edit, Transform


class DeadCode(PatternTransform):
    """Remove statements whose results nobody reads."""

    name = "dead_code"
    pattern = Pattern()  # any statement

    def edit(self, program: Program, found: Found) -> Edit | None:
        return remove(program, found.root)

    def describe(self, program: Program, found: Found) -> str:
        written = program[found.root].writes
        return f"{', '.join(w.var for w in written)} is never read"


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [DeadCode]
