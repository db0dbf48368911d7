"""Hypothesis strategies: random valid programs and random views of them."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from nkigym_graph import Program
from nkigym_graph.ir.synthetic import tiled_matmul

sizes = st.sampled_from([64, 96, 128, 200, 256, 300])


@st.composite
def tiled_programs(draw: st.DrawFn) -> Program:
    """Tiled matmuls with ragged sizes, 1-3 tiles per axis, an optional elementwise tail."""
    m, k, n = draw(sizes), draw(sizes), draw(sizes)
    tile = draw(st.sampled_from([64, 128]))
    tail = draw(st.sampled_from([None, "tanh", "exp", "relu"]))
    return tiled_matmul(m, k, n, tile=tile, tail=tail, dtype="float64")


def random_topological_order(program: Program, seed: int) -> list[int]:
    """A random topological order of the program's DAG (Kahn's algorithm, random ties)."""
    rnd = random.Random(seed)
    graph = program.graph
    indegree = {node: graph.in_degree(node) for node in graph}
    ready = [node for node, d in indegree.items() if d == 0]
    order = []
    while ready:
        node = ready.pop(rnd.randrange(len(ready)))
        order.append(node)
        for nxt in graph.successors(node):
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    return order
