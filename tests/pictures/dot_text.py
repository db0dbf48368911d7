"""Reading DOT text back with pydot, independently of the code that wrote it."""

from __future__ import annotations

import pydot


def parse(text: str) -> pydot.Dot:
    """The one graph in ``text``."""
    (graph,) = pydot.graph_from_dot_data(text)
    return graph


def all_nodes(graph: pydot.Graph) -> dict[str, pydot.Node]:
    """Every real node (default-attribute statements left out), subgraphs included."""
    found = {n.get_name(): n for n in graph.get_nodes() if n.get_name() not in ("node", "edge", "graph")}
    for sub in graph.get_subgraphs():
        found.update(all_nodes(sub))
    return found


def all_edges(graph: pydot.Graph) -> list[pydot.Edge]:
    """Every edge, subgraphs included, invisible layout edges left out."""
    found = [e for e in graph.get_edges() if e.get("style") != "invis"]
    for sub in graph.get_subgraphs():
        found.extend(all_edges(sub))
    return found


def unquote(value: str | None) -> str:
    """An attribute's text without DOT quotes, with DOT line breaks as newlines."""
    text = (value or "").strip('"')
    return text.replace("\\n", "\n").replace('\\"', '"')
