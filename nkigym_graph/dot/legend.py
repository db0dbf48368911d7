"""The legend: one HTML-table node saying what the colours, shapes and edges mean.

It lists only what the picture uses: the ops present (their colour), the kinds of
edges drawn, the diff statuses in a diff, and how folded groups look.
"""

from __future__ import annotations

from collections.abc import Iterable

from nkigym_graph.dot.style import (
    EDGE_KINDS,
    STATUS_STYLE,
    STATUSES,
    TERMINAL_FILL,
    TERMINAL_SHAPE,
    html_escape,
    op_color,
)

LEGEND_ID = "legend"

_EDGE_GLYPH = {"order": "- - -&gt;"}


def legend_label(ops: Iterable[str], edge_kinds: Iterable[str], statuses: Iterable[str], folded: str) -> str:
    """The HTML-like label of the legend node (``<...>``)."""
    rows = ['<tr><td colspan="2"><b>legend</b></td></tr>']
    present = set(statuses)
    if present - {""}:
        for status in (s for s in STATUSES if s in present):
            fill, border, text = STATUS_STYLE[status]
            rows.append(_row(f'<td bgcolor="{fill}" color="{border}">  </td>', text))
        for status in ("added", "removed"):
            glyph = "- - -&gt;" if status == "removed" else "——&gt;"
            colour = STATUS_STYLE[status][1]
            rows.append(_row(f'<td><font color="{colour}">{glyph}</font></td>', f"edge {status} (any kind)"))
    else:
        for op in sorted(set(ops)):
            rows.append(_row(f'<td bgcolor="{op_color(op)}">  </td>', f"{op} statement"))
    for kind, fill in TERMINAL_FILL.items():
        rows.append(_row(f'<td bgcolor="{fill}">  </td>', f"{kind} tensor in HBM ({TERMINAL_SHAPE[kind]})"))
    kinds = set(edge_kinds)
    for kind, (attrs, text) in EDGE_KINDS.items():
        if kind in kinds:
            glyph = _EDGE_GLYPH.get(kind, "——&gt;")
            colour = attrs.get("color", "black")
            rows.append(_row(f'<td><font color="{colour}">{glyph}</font></td>', text))
    if folded:
        rows.append(
            _row("<td>[ ]</td>", f"double border: a folded group ({folded}); edges merged, ×N counts")
        )
    return (
        "<"
        + '<table border="0" cellborder="1" cellspacing="0" cellpadding="3">'
        + "".join(rows)
        + "</table>>"
    )


def _row(cell: str, text: str) -> str:
    return f'<tr>{cell}<td align="left">{html_escape(text)}</td></tr>'
