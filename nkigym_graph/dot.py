"""DOT pictures of a program's DAG (pydot; Graphviz renders ``.svg``/``.png``).

Nodes show their statement line and are coloured by op (a fixed colour per op name);
data edges show the region read, ordering edges are dashed.
"""

from __future__ import annotations

import shutil
from hashlib import blake2b
from pathlib import Path
from typing import TYPE_CHECKING

from nkigym_graph.errors import NkigymError
from nkigym_graph.program import Program
from nkigym_graph.slices import format_slices

if TYPE_CHECKING:
    import pydot

_PALETTE = (
    "#8dd3c7",
    "#ffffb3",
    "#bebada",
    "#fb8072",
    "#80b1d3",
    "#fdb462",
    "#b3de69",
    "#fccde5",
    "#d9d9d9",
    "#bc80bd",
    "#ccebc5",
    "#ffed6f",
)
_FIXED = {"load": "#80b1d3", "store": "#fdb462", "alloc": "#d9d9d9", "nc_matmul": "#fb8072"}


def op_color(op_name: str) -> str:
    """A deterministic fill colour for an op name."""
    if op_name in _FIXED:
        return _FIXED[op_name]
    digest = blake2b(op_name.encode(), digest_size=2).digest()
    return _PALETTE[int.from_bytes(digest, "big") % len(_PALETTE)]


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def to_dot(program: Program) -> pydot.Dot:
    """A ``pydot.Dot`` of the program: one box per statement, one arrow per dependency."""
    import pydot

    dot = pydot.Dot(graph_name=_quote(program.name), graph_type="digraph", rankdir="TB")
    dot.set_node_defaults(shape="box", style="filled,rounded", fontname="monospace", fontsize="10")
    dot.set_edge_defaults(fontname="monospace", fontsize="9")
    for node, stmt in enumerate(program.statements):
        dot.add_node(
            pydot.Node(
                f"n{node}",
                label=_quote(program.describe(node)),
                fillcolor=_quote(op_color(stmt.op.name)),
                tooltip=_quote(f"#{node} {stmt.op.name}"),
            )
        )
    for src, dst, data in program.graph.edges(data=True):
        uses = data["uses"]
        if uses:
            label = "\\n".join(f"{u.var}[{format_slices(u.slices)}]" for u in uses)
            dot.add_edge(pydot.Edge(f"n{src}", f"n{dst}", label=_quote(label)))
        else:
            dot.add_edge(
                pydot.Edge(
                    f"n{src}",
                    f"n{dst}",
                    style="dashed",
                    color="gray50",
                    label=_quote("after " + ", ".join(data["order"])),
                )
            )
    return dot


def write_dot(program: Program, path: str | Path) -> Path:
    """Write the picture: ``.dot`` always works; ``.svg``/``.png``/``.pdf`` need Graphviz."""
    path = Path(path)
    dot = to_dot(program)
    suffix = path.suffix.lower().lstrip(".")
    if suffix in ("dot", "gv", ""):
        path.write_text(dot.to_string())
        return path
    if suffix not in ("svg", "png", "pdf"):
        raise NkigymError(f"unsupported picture format {path.suffix!r}: use .dot, .svg, .png or .pdf")
    if shutil.which("dot") is None:
        raise NkigymError(
            f"writing {path.name} needs Graphviz's `dot` program (apt-get install graphviz); "
            "a .dot file needs nothing"
        )
    rendered = dot.create(format=suffix)
    path.write_bytes(rendered if isinstance(rendered, bytes) else rendered.encode())
    return path
