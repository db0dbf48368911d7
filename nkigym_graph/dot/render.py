"""A scene drawn as a ``pydot.Dot``.

Unfolded boxes are one node each. A fold group of two or more statements is either
collapsed into one node (double border; its label gives the group, the statement
count and the op mix, its fill is striped by op) with its edges merged and counted,
or drawn expanded as a cluster with the same label around its statements. Nodes and
edges come out in the scene's order, so the same scene gives the same DOT text.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from nkigym_graph.dot.folding import op_mix
from nkigym_graph.dot.legend import LEGEND_ID, legend_label
from nkigym_graph.dot.scene import Arrow, Box, Scene
from nkigym_graph.dot.style import (
    EDGE_KINDS,
    STATUS_STYLE,
    STATUSES,
    TERMINAL_FILL,
    TERMINAL_SHAPE,
    op_color,
    pen_width,
    quote,
    stripes,
)

if TYPE_CHECKING:
    import pydot

ACROSS_ABOVE = 8
"""More collapsed groups than this are drawn left to right (groups stacked in a column)."""
GRID_ABOVE = 24
"""More collapsed groups than this are laid out as a grid rather than in one column."""


def render(scene: Scene, *, collapse: bool, fold_name: str, name: str) -> pydot.Dot:
    """The DOT graph of ``scene``; ``fold_name`` describes the fold in the title and legend."""
    import pydot

    dot = pydot.Dot(graph_name=quote(name), graph_type="digraph", rankdir="TB")
    dot.set("labelloc", "t")
    dot.set("fontsize", "14")
    dot.set_node_defaults(shape="box", style="filled,rounded", fontname="monospace", fontsize="10")
    dot.set_edge_defaults(fontname="monospace", fontsize="9")
    diff = any(box.status for box in scene.boxes)
    folded = _folded_groups(scene.boxes)
    title = scene.title
    if folded:
        inside = sum(len(members) for members in folded.values())
        title += f"\nfolded {fold_name}: {inside} statements in {len(folded)} groups"
    dot.set("label", quote(title))

    shown = _add_groups(dot, scene, folded, collapse, diff)
    folded_ids = {box.id for members in folded.values() for box in members}
    for box in scene.boxes:
        if box.id not in folded_ids:
            dot.add_node(_box_node(box))
    _add_terminals(dot, scene)
    arrows = [arrow for arrow in scene.arrows if not (shown and arrow.minor)]
    for edge in _merged_edges(arrows, shown, diff, faint=collapse and len(folded) > GRID_ABOVE):
        dot.add_edge(edge)

    legend = pydot.Subgraph("cluster_legend", label='""', color="white")
    label = legend_label(
        (box.op for box in scene.boxes),
        (arrow.kind for arrow in arrows),
        (box.status for box in scene.boxes),
        fold_name if folded and collapse else "",
    )
    legend.add_node(pydot.Node(LEGEND_ID, shape="plaintext", style='""', label=label))
    dot.add_subgraph(legend)
    return dot


def _folded_groups(boxes: list[Box]) -> dict[Hashable, list[Box]]:
    """Fold groups of two or more statements, in order of their first statement."""
    groups: dict[Hashable, list[Box]] = {}
    for box in boxes:
        if box.group is not None:
            groups.setdefault(box.group, []).append(box)
    return {key: members for key, members in groups.items() if len(members) > 1}


def _add_groups(
    dot: pydot.Dot, scene: Scene, folded: dict[Hashable, list[Box]], collapse: bool, diff: bool
) -> dict[str, str]:
    """Draw the groups; returns box id -> id of the collapsed node standing for it."""
    import pydot

    shown: dict[str, str] = {}
    for number, (key, members) in enumerate(folded.items()):
        heading = f"{scene.group_labels.get(key, str(key))}\n{_summary(members, diff)}"
        if collapse:
            dot.add_node(_group_node(f"g{number}", heading, members, diff))
            shown.update((box.id, f"g{number}") for box in members)
        else:
            cluster = pydot.Subgraph(
                f"cluster_g{number}", label=quote(heading), style="rounded", color="gray40"
            )
            for box in members:
                cluster.add_node(_box_node(box))
            dot.add_subgraph(cluster)
    if collapse and len(folded) > ACROSS_ABOVE:
        dot.set("rankdir", "LR")
    if collapse and len(folded) > GRID_ABOVE:
        _stack_in_rows([f"g{number}" for number in range(len(folded))], dot)
    return shown


def _add_terminals(dot: pydot.Dot, scene: Scene) -> None:
    """Parameters on the first rank, outputs on the last."""
    import pydot

    for kind, rank in (("param", "source"), ("output", "sink")):
        same_rank = pydot.Subgraph(f"{kind}s", rank=rank)
        for terminal in scene.terminals:
            if terminal.kind == kind:
                attrs: dict[str, Any] = {
                    "shape": TERMINAL_SHAPE[kind],
                    "style": "filled",
                    "fillcolor": quote(TERMINAL_FILL[kind]),
                }
                same_rank.add_node(pydot.Node(terminal.id, label=quote(terminal.text), **attrs))
        dot.add_subgraph(same_rank)


def _stack_in_rows(node_ids: list[str], dot: pydot.Dot) -> None:
    """Lay many group nodes out as a grid (ranks of ``sqrt(n)`` nodes, in group order)."""
    import pydot

    dot.set("nodesep", "0.15")
    dot.set("ranksep", "1.2")
    width = math.isqrt(len(node_ids) - 1) + 1
    for above, below in zip(node_ids, node_ids[width:], strict=False):
        dot.add_edge(pydot.Edge(above, below, style="invis"))


def _summary(members: list[Box], diff: bool) -> str:
    """``24 statements: 16 x load, 8 x nc_matmul`` (and the status counts in a diff)."""
    text = f"{len(members)} statements:\n" + op_mix([box.op for box in members]).replace(", ", "\n")
    if diff:
        counts = {s: sum(1 for box in members if box.status == s) for s in STATUSES}
        text += "\n" + ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
    return text


def _group_node(node_id: str, heading: str, members: list[Box], diff: bool) -> pydot.Node:
    import pydot

    weights: dict[str, int] = {}
    for status in STATUSES if diff else ():
        count = sum(1 for box in members if box.status == status)
        if count:
            weights[STATUS_STYLE[status][0]] = count
    for box in members if not diff else ():
        weights[op_color(box.op)] = weights.get(op_color(box.op), 0) + 1
    style = "striped" if len(weights) > 1 else "filled"
    border = _group_border(members) if diff else "black"
    return pydot.Node(
        node_id,
        label=quote(heading),
        style=style,
        fillcolor=quote(stripes(weights)),
        peripheries="2",
        color=quote(border),
    )


def _group_border(members: list[Box]) -> str:
    for status in STATUSES:
        if any(box.status == status for box in members):
            return STATUS_STYLE[status][1]
    return "black"


def _box_node(box: Box) -> pydot.Node:
    import pydot

    attrs: dict[str, Any] = {"label": quote(box.text), "tooltip": quote(box.tooltip or box.op)}
    if box.status:
        fill, border, _ = STATUS_STYLE[box.status]
        attrs.update(fillcolor=quote(fill), color=quote(border))
        if box.status == "removed":
            attrs["style"] = quote("filled,rounded,dashed")
        elif box.status != "same":
            attrs["penwidth"] = "2"
        else:
            attrs["fontcolor"] = "gray40"
    else:
        attrs["fillcolor"] = quote(op_color(box.op))
    return pydot.Node(box.id, **attrs)


def _merged_edges(arrows: list[Arrow], shown: dict[str, str], diff: bool, *, faint: bool) -> list[pydot.Edge]:
    """One edge per (from, to, kind, status); edges inside a collapsed group dropped.
    ``faint``: parameter and output edges half transparent (a grid has many)."""
    import pydot

    merged: dict[tuple[str, str, str, str], list[Arrow]] = {}
    folded: set[tuple[str, str, str, str]] = set()
    for arrow in arrows:
        src, dst = shown.get(arrow.src, arrow.src), shown.get(arrow.dst, arrow.dst)
        if src == dst and src != arrow.src:
            continue
        key = (src, dst, arrow.kind, arrow.status)
        merged.setdefault(key, []).append(arrow)
        if (src, dst) != (arrow.src, arrow.dst):
            folded.add(key)
    edges = []
    for key, found in merged.items():
        src, dst, kind, status = key
        attrs = dict(EDGE_KINDS[kind][0])
        if diff and status in ("added", "removed"):
            attrs["color"] = STATUS_STYLE[status][1]
            attrs["penwidth"] = "2"
            if status == "removed":
                attrs["style"] = "dashed"
        elif diff:
            attrs["color"] = "gray60"
        if faint and kind in ("read", "write") and attrs["color"].startswith("#"):
            attrs["color"] += "80"
        if key not in folded or len(found) == 1:  # between two statements: every region
            label = "\n".join(dict.fromkeys(arrow.label for arrow in found))
        else:
            label = f"×{len(found)}"
            attrs["penwidth"] = pen_width(len(found))
        quoted: dict[str, Any] = {k: quote(v) for k, v in attrs.items()}
        edges.append(pydot.Edge(src, dst, label=quote(label), **quoted))
    return edges
