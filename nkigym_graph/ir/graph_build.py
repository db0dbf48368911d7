"""Building the frozen ``networkx.DiGraph`` of a snapshot in bulk.

``DiGraph.add_edges_from`` costs several microseconds per edge (it copies and merges
an attribute dict for each); a snapshot is built once from edges known to be unique,
so it fills the graph's documented dict-of-dicts structure (``_node``, ``_succ`` /
``_adj``, ``_pred``; see the "Subclasses (Advanced)" notes of ``networkx.DiGraph``)
directly, then freezes it. The result is an ordinary ``DiGraph`` whose structure is
frozen and whose attribute mappings (graph, nodes, edges) are read-only, so nothing
done to the graph changes the snapshot it shows; ``networkx.DiGraph(graph)`` or
``graph.copy()`` gives a mutable copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import networkx as nx


def frozen_digraph(
    nodes: Sequence[int],
    node_attrs: Sequence[dict[str, Any]],
    edges: Iterable[tuple[int, int, dict[str, Any]]],
) -> nx.DiGraph:
    """A frozen DiGraph with ``nodes`` (in this order) and the given (unique) edges."""
    graph = nx.DiGraph()
    graph._node.update(zip(nodes, map(MappingProxyType, node_attrs), strict=True))
    succ: dict[int, dict[int, Mapping[str, Any]]] = {i: {} for i in nodes}
    pred: dict[int, dict[int, Mapping[str, Any]]] = {i: {} for i in nodes}
    for u, v, attrs in edges:
        succ[u][v] = pred[v][u] = MappingProxyType(attrs)
    graph._succ.update(succ)
    graph._pred.update(pred)
    graph.graph = MappingProxyType(graph.graph)
    return nx.freeze(graph)
