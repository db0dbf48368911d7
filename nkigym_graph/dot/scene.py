"""What a picture shows, before any DOT: boxes (statements), terminals (parameters and
outputs) and arrows between them.

A program's scene has one box per statement (id ``n<node>``), one terminal per
parameter (``p_<name>``) and per output tensor (``o_<name>``), the program's
data and ordering edges, an arrow from a parameter to every statement reading it
and from every statement writing an output to that output, labelled with the slices.
A diff scene (``nkigym_graph.dot.diff``) adds boxes of removed statements and a status
on every box and arrow.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import NamedTuple

from nkigym_graph.ir.dependencies import Use
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.slices import Slices, format_slices
from nkigym_graph.ir.variables import OUTPUT, PARAM


class Box(NamedTuple):
    """A statement."""

    id: str
    op: str
    describe: Callable[[], str]
    """Its text line, computed only if drawn (a folded statement never is)."""
    group: Hashable | None = None
    """The fold group it belongs to (None: drawn on its own)."""
    status: str = ""
    """Diff status: ``same``, ``changed``, ``added``, ``removed``; empty outside diffs."""
    tooltip: str = ""

    @property
    def text(self) -> str:
        """The statement's text line."""
        return self.describe()


class Terminal(NamedTuple):
    """A parameter or an output tensor."""

    id: str
    kind: str
    """``param`` or ``output``."""
    text: str


class Arrow(NamedTuple):
    """An edge: ``kind`` is ``data``, ``order``, ``read`` (parameter) or ``write`` (output)."""

    src: str
    dst: str
    kind: str
    describe: Callable[[], str]
    """Its label, computed only if drawn."""
    status: str = ""
    minor: bool = False
    """Left out of collapsed pictures: ordering after an allocation (the output shows it)."""

    @property
    def label(self) -> str:
        """The region read or written, or the variables ordering two statements."""
        return self.describe()


@dataclass
class Scene:
    """Everything one picture shows, in a fixed order."""

    title: str
    boxes: list[Box] = field(default_factory=list)
    terminals: list[Terminal] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    group_labels: dict[Hashable, str] = field(default_factory=dict)
    """A readable name for each fold group key."""


def terminals_of(program: Program) -> list[Terminal]:
    """Parameters in signature order, then outputs in the order they are defined."""
    found = []
    for info in program.variables.values():
        if info.kind in (PARAM, OUTPUT):
            kind = "param" if info.kind == PARAM else "output"
            shape = "x".join(str(d) for d in info.shape)
            found.append(
                Terminal(
                    terminal_id(info.name, kind), kind, f"{info.name}\n{shape} {info.dtype or ''}".rstrip()
                )
            )
    return found


def terminal_id(var: str, kind: str) -> str:
    """The node id of a parameter or output terminal."""
    return f"{'p' if kind == 'param' else 'o'}_{var}"


def program_arrows(program: Program, box_id: Mapping[int, str]) -> list[Arrow]:
    """The program's edges, between the box ids given per statement id."""
    arrows = []
    for src, dst, data in program.graph.edges(data=True):
        uses = data["uses"]
        if uses:
            arrows.append(Arrow(box_id[src], box_id[dst], "data", partial(_uses_label, uses)))
        else:
            minor = not program[src].op.read_positions
            label = partial(_order_label, data["order"])
            arrows.append(Arrow(box_id[src], box_id[dst], "order", label, minor=minor))
    return arrows


def terminal_arrows(program: Program, box_id: Mapping[int, str]) -> list[Arrow]:
    """Parameter reads and output writes, with the slices read or written."""
    variables = program.variables
    arrows = []
    for node, stmt in program.items():
        for _, operand in stmt.read_items():
            info = variables.get(operand.var)
            if info is not None and info.kind == PARAM:
                read = partial(_slices_label, operand.slices)
                arrows.append(Arrow(terminal_id(operand.var, "param"), box_id[node], "read", read))
        for operand in stmt.writes:
            info = variables.get(operand.var)
            if info is not None and info.kind == OUTPUT:
                write = partial(_slices_label, operand.slices) if stmt.op.read_positions else _allocates
                arrows.append(Arrow(box_id[node], terminal_id(operand.var, "output"), "write", write))
    return arrows


def _uses_label(uses: tuple[Use, ...]) -> str:
    return "\n".join(f"{u.var}[{format_slices(u.slices)}]" for u in uses)


def _order_label(variables: tuple[str, ...]) -> str:
    return "after " + ", ".join(variables)


def _slices_label(slices: Slices) -> str:
    return f"[{format_slices(slices)}]"


def _allocates() -> str:
    return "allocates"


def title_of(program: Program) -> str:
    """Name, statement count, target and hash prefix."""
    count = len(program)
    return (
        f"{program.name}: {count} statement{'s' if count != 1 else ''}, "
        f"{program.target.name}, hash {program.canonical_hash[:12]}"
    )


def program_scene(program: Program, groups: list[Hashable | None] | None = None) -> Scene:
    """The scene of one program; ``groups`` gives each statement's fold group (in
    program order)."""
    box_id = {node: f"n{node}" for node in program.ids}
    scene = Scene(title_of(program), terminals=terminals_of(program))
    for at, (node, stmt) in enumerate(program.items()):
        group = groups[at] if groups is not None else None
        scene.boxes.append(
            Box(
                box_id[node],
                stmt.op.name,
                partial(program.describe, node),
                group,
                tooltip=f"#{node} {stmt.op.name}",
            )
        )
    scene.arrows = terminal_arrows(program, box_id) + program_arrows(program, box_id)
    return scene
