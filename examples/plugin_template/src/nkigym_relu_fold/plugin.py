"""``relu_fold``: a relu of a relu computes nothing new; its readers read the inner relu.

Before::

    tensor_3 = nkigym.activation(tensor_2, op="relu")
    tensor_4 = nkigym.activation(tensor_3, op="relu")
    output[0:128, 0:128] = tensor_4

After::

    tensor_3 = nkigym.activation(tensor_2, op="relu")
    output[0:128, 0:128] = tensor_3

Written with patterns: the pattern says what to find, ``forward`` what to do (and
refuses where it would be wrong); the base class builds each match with everything a
batch needs, so ``saturate`` folds a whole chain of relus in one batch.
"""

from __future__ import annotations

import nkigym_graph
from nkigym_graph import Edit, Found, Pattern, PatternTransform, Program, Transform
from nkigym_graph.rewriting.patterns import forward


class ReluFold(PatternTransform):
    """relu(relu(x)) -> relu(x); the outer relu must not scale or shift (relu(2 * relu(x)) is
    not relu(x)): ``scale=1.0, bias=0.0`` also match a statement that leaves them at their
    defaults."""

    name = "relu_fold"
    pattern = Pattern(
        "activation", Pattern("activation", op="relu"), op="relu", scale=1.0, bias=0.0, capture="outer"
    )

    def edit(self, program: Program, found: Found) -> Edit | None:
        return forward(program, found["outer"])


@nkigym_graph.hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [ReluFold]
