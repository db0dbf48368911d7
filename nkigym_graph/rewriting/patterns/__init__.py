"""Patterns: transforms as a few lines of data.

A ``PatternTransform`` (``transform``) is a pattern and an edit. Patterns are tree
patterns over producers (``tree.Pattern``: op, attribute constraints, operand
sub-patterns, named captures), set patterns of same-op statements adjacent along an
axis (``sets.SetPattern``, on the merge rules of ``adjacency``) or equal patterns of
statements computing the same value (``equal.EqualPattern``). Rewrite helpers
(``helpers``: ``forward``, ``remove``, ``replace``, ``merge_run``, ``dedupe``,
``insert_before``) return
the ``Edit`` of a common rewrite. The base computes each match's footprint (``footprint``), so
matches are safe to apply in one batch, and updates its analysis from what an edit
touched.

>>> import numpy as np
>>> import nkigym_graph as ng
>>> class ReluFold(PatternTransform):
...     name = "relu_fold_example"
...     inner = Pattern("activation", op="relu")
...     pattern = Pattern("activation", inner, op="relu", scale=1.0, bias=0.0, capture="outer")
...
...     def edit(self, program, found):
...         return forward(program, found["outer"])
>>> def f(a, b):
...     x = ng.activation(ng.activation(ng.nc_matmul(a, b), op="relu"), op="relu")
...     return ng.activation(x, op="relu")
>>> program = ng.tile(f, {"a": (128, 128), "b": (128, 256)})
>>> len(program.statements_of("activation")), len(ReluFold().analyze(program))
(6, 4)
>>> steps = list(ng.saturate_steps(program, [ReluFold()]))
>>> [(batch.count, len(after.statements_of("activation"))) for batch, after in steps]
[(1, 2)]
"""

from nkigym_graph.rewriting.patterns.equal import EqualPattern
from nkigym_graph.rewriting.patterns.helpers import (
    dedupe,
    forward,
    insert_before,
    merge_run,
    new_name,
    remove,
    replace,
)
from nkigym_graph.rewriting.patterns.sets import SetPattern
from nkigym_graph.rewriting.patterns.transform import PatternTransform
from nkigym_graph.rewriting.patterns.tree import Found, Pattern

__all__ = [
    "EqualPattern",
    "Found",
    "Pattern",
    "PatternTransform",
    "SetPattern",
    "dedupe",
    "forward",
    "insert_before",
    "merge_run",
    "new_name",
    "remove",
    "replace",
]
