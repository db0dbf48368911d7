"""What an unfolded picture shows: parameters, outputs, slices on their edges, title, legend."""

from __future__ import annotations

from pictures.dot_text import all_edges, all_nodes, parse, unquote
from support import seed_text

from nkigym_graph import parse_program, to_dot

SEED = "001_program_before"  # a: 128x128, b: 128x256, output 128x256; two output tiles


def _picture() -> tuple[object, dict, list]:
    program = parse_program(seed_text(SEED))
    graph = parse(to_dot(program).to_string())
    return program, all_nodes(graph), all_edges(graph)


def test_parameters_and_outputs_are_nodes_with_their_own_shapes() -> None:
    _, nodes, _ = _picture()
    assert unquote(nodes["p_a"].get_label()) == "a\n128x128 float32"
    assert unquote(nodes["p_b"].get_label()) == "b\n128x256 float32"
    assert unquote(nodes["o_output"].get_label()) == "output\n128x256 float32"
    shapes = {name: nodes[name].get_shape() for name in ("p_a", "p_b", "o_output")}
    assert shapes["p_a"] == shapes["p_b"] != shapes["o_output"]
    statement_shapes = {n.get_shape() for name, n in nodes.items() if name.startswith("n")}
    assert shapes["p_a"] not in statement_shapes and shapes["o_output"] not in statement_shapes


def test_loads_and_stores_carry_their_slices_on_the_edge() -> None:
    _, nodes, edges = _picture()
    by_text = {unquote(n.get_label()): name for name, n in nodes.items()}
    found = {(e.get_source(), e.get_destination(), unquote(e.get_label())) for e in edges}
    expected = {  # from the seed text: four loads, two stores
        ("p_a", by_text["tensor_0 = a[0:128, 0:128]"], "[0:128, 0:128]"),
        ("p_b", by_text["tensor_1 = b[0:128, 0:128]"], "[0:128, 0:128]"),
        ("p_a", by_text["tensor_3 = a[0:128, 0:128]"], "[0:128, 0:128]"),
        ("p_b", by_text["tensor_4 = b[0:128, 128:256]"], "[0:128, 128:256]"),
        (by_text["output[0:128, 0:128] = tensor_2"], "o_output", "[0:128, 0:128]"),
        (by_text["output[0:128, 128:256] = tensor_5"], "o_output", "[0:128, 128:256]"),
    }
    assert expected <= found
    terminal_edges = {
        f for f in found if f[0].startswith("p_") or (f[1] == "o_output" and f[2] != "allocates")
    }
    assert terminal_edges == expected


def test_title_names_program_size_target_and_hash() -> None:
    program = parse_program(seed_text(SEED))
    title = unquote(parse(to_dot(program).to_string()).get_label())
    assert title == f"tiled_matmul: 9 statements, trn2, hash {program.canonical_hash[:12]}"


def test_legend_lists_the_ops_and_edge_kinds_drawn() -> None:
    _, nodes, _ = _picture()
    legend = nodes["legend"].get_label()
    for text in ("alloc", "load", "nc_matmul", "store", "param", "output", "data", "ordering"):
        assert text in legend
    assert "tensor_tensor" not in legend  # only what the picture uses
