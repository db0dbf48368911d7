"""DOT pictures."""

from __future__ import annotations

import shutil

import pydot
import pytest
from support import seed_text

from nkigym_graph import NkigymError, parse_program, to_dot, write_dot
from nkigym_graph.dot import op_color
from nkigym_graph.ir.ops.registry import all_ops


def test_dot_reparses_with_pydot_and_labels_statements() -> None:
    program = parse_program(seed_text("001_program_after"))
    text = to_dot(program).to_string()
    (graph,) = pydot.graph_from_dot_data(text)
    nodes = {n.get_name(): n for n in graph.get_nodes() if n.get_name()[1:].isdigit()}
    assert len(nodes) == len(program)
    labels = [n.get_label() for n in nodes.values()]
    assert '"tensor_1 = b[0:128, 0:256]"' in labels
    edge_labels = {e.get_label() for e in graph.get_edges()}
    assert '"tensor_1[0:128, 128:256]"' in edge_labels  # the slice read


def test_colours_are_deterministic_per_op() -> None:
    assert op_color("nc_matmul") == op_color("nc_matmul")
    assert op_color("load") != op_color("store")
    program = parse_program(seed_text("002_program"))
    dot = to_dot(program)
    fills = {n.get_name(): n.get("fillcolor") for n in dot.get_nodes()}
    loads = {fills[f"n{i}"] for i in program.statements_of("load")}
    assert loads == {f'"{op_color("load")}"'}


def test_every_built_in_op_has_its_own_colour() -> None:
    names = list(all_ops())
    colours = [op_color(name) for name in names]
    assert len(set(colours)) == len(names), dict(zip(names, colours, strict=True))


def test_a_plugin_op_never_takes_a_built_in_colour() -> None:
    built_in = {op_color(name) for name in all_ops()}
    assert all(op_color(f"plugin_op_{i}") not in built_in for i in range(200))


def test_write_dot_file(tmp_path) -> None:
    program = parse_program(seed_text("002_program"))
    path = write_dot(program, tmp_path / "p.dot")
    assert pydot.graph_from_dot_file(str(path))


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_write_svg_with_graphviz(tmp_path) -> None:
    program = parse_program(seed_text("002_program"))
    path = write_dot(program, tmp_path / "p.svg")
    assert path.read_text().lstrip().startswith(("<?xml", "<svg"))


def test_unknown_picture_format_is_an_error(tmp_path) -> None:
    with pytest.raises(NkigymError, match="unsupported picture format"):
        write_dot(parse_program(seed_text("002_program")), tmp_path / "p.bmp")
