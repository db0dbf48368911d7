"""The strands of a program: the sets of statements that share no work but common inputs.

A row-wise kernel (a layer norm, a softmax) repeats the same statements for every row
tile; the tiles share only loads of rows every tile reads (``gamma``, ``beta``) and the
output's allocation. Leaving out the roots (statements with no inputs), the rest of
the program falls apart into its strands, numbered in program order; a root whose
readers are all in one strand joins it, the others (shared roots) stay out::

    g = gamma[0:1, :]                      # shared root: no strand
    x0 = x[0:128, :]; y0 = x0 * g; ...     # strand 0
    x1 = x[128:256, :]; y1 = x1 * g; ...   # strand 1

The ``recipe`` engine policy (:mod:`.mix`) lowers each strand by one recipe.
"""

from __future__ import annotations

from nkigym_graph.ir.program import Program


def strands(program: Program) -> dict[int, int]:
    """Statement -> the index of its strand (shared roots have none)."""
    roots = {node for node in program.ids if not program.predecessors(node)}
    parent = {node: node for node in program.ids if node not in roots}

    def find(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for node in parent:
        for succ in program.successors(node):
            parent[find(succ)] = find(node)
    index: dict[int, int] = {}
    strand_of: dict[int, int] = {}
    for node in program.ids:
        if node in parent:
            strand_of[node] = index.setdefault(find(node), len(index))
    for node in roots:
        found = {strand_of[succ] for succ in program.successors(node)}
        if len(found) == 1:
            strand_of[node] = found.pop()
    return strand_of
