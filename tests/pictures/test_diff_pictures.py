"""Diff pictures: the statements a known rewrite removed, added or changed, by colour."""

from __future__ import annotations

from pictures.dot_text import all_edges, all_nodes, parse, unquote
from support import seed_text

from nkigym_graph import Program, parse_program, saturate, saturate_steps, to_dot_diff
from nkigym_graph.dot.style import STATUS_STYLE
from nkigym_graph.ir.synthetic import tiled_matmul

FILL_TO_STATUS = {f'"{fill}"': status for status, (fill, _, _) in STATUS_STYLE.items()}


def _statuses(before: Program, after: Program) -> dict[str, str]:
    """Statement text -> status, read from the fill colours of the diff picture."""
    nodes = all_nodes(parse(to_dot_diff(before, after).to_string()))
    return {
        unquote(node.get_label()): FILL_TO_STATUS[node.get("fillcolor")]
        for name, node in nodes.items()
        if name[0] in "nr" and name[1:].isdigit()
    }


def _batches() -> list[Program]:
    """Seed 001's program and the program after each saturation batch."""
    program = parse_program(seed_text("001_program_before"))
    return [program] + [after for _, after in saturate_steps(program)]


def test_data_reuse_batch_removes_exactly_the_duplicate_load() -> None:
    before, after = _batches()[:2]
    statuses = _statuses(before, after)
    assert {text for text, s in statuses.items() if s != "same"} == {"tensor_3 = a[0:128, 0:128]"}
    assert statuses["tensor_3 = a[0:128, 0:128]"] == "removed"
    assert len(statuses) == len(before)


def test_operand_merge_batch_colours_each_statement_it_touched() -> None:
    before, after = _batches()[1:3]  # the two b loads become one 256-wide load
    assert _statuses(before, after) == {
        "output = nkigym.ndarray((128, 256), dtype=np.float32)": "same",
        "tensor_0 = a[0:128, 0:128]": "same",
        "tensor_1 = b[0:128, 0:128]": "removed",
        "tensor_4 = b[0:128, 128:256]": "removed",
        "tensor_1 = b[0:128, 0:256]": "added",
        "tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1[0:128, 0:128])": "changed",
        "tensor_5 = nkigym.nc_matmul(tensor_0, tensor_1[0:128, 128:256])": "changed",
        "output[0:128, 0:128] = tensor_2": "changed",
        "output[0:128, 128:256] = tensor_5": "changed",
    }


def test_data_reuse_reroutes_one_edge_from_the_removed_load_to_the_kept_one() -> None:
    before, after = _batches()[:2]
    graph = parse(to_dot_diff(before, after).to_string())
    name = {unquote(node.get_label()): n for n, node in all_nodes(graph).items()}
    kept, dropped = name["tensor_0 = a[0:128, 0:128]"], name["tensor_3 = a[0:128, 0:128]"]
    reader = name["tensor_5 = nkigym.nc_matmul(tensor_0, tensor_4)"]
    by_colour: dict[str, set[tuple[str, str]]] = {}
    for edge in all_edges(graph):
        by_colour.setdefault(edge.get("color"), set()).add((edge.get_source(), edge.get_destination()))
    assert by_colour[f'"{STATUS_STYLE["added"][1]}"'] == {(kept, reader)}
    assert by_colour[f'"{STATUS_STYLE["removed"][1]}"'] == {("p_a", dropped), (dropped, reader)}


def test_renaming_and_reordering_change_nothing() -> None:
    before = parse_program(seed_text("001_program_before"))
    renamed = parse_program(seed_text("001_program_before").replace("tensor_", "t_"))
    assert set(_statuses(before, renamed).values()) == {"same"}


def test_title_and_legend_say_what_changed() -> None:
    before, after = _batches()[1:3]
    graph = parse(to_dot_diff(before, after).to_string())
    assert unquote(graph.get_label()).endswith("2 removed, 1 added, 4 changed")
    legend = all_nodes(graph)["legend"].get_label()
    assert all(word in legend for word in ("removed", "added", "changed", "unchanged"))


def test_folded_diff_counts_removals_per_group() -> None:
    before = tiled_matmul(512, 256, 512)  # 16 output tiles
    after = saturate(before, ["data_reuse"])  # only removes duplicate loads
    graph = parse(to_dot_diff(before, after, "tile").to_string())
    removed = 0
    for name, node in all_nodes(graph).items():
        lines = unquote(node.get_label()).split("\n")
        if name.startswith("g"):
            removed += sum(int(part.split()[0]) for part in lines[-1].split(", ") if part.endswith("removed"))
        elif name.startswith("r"):
            removed += 1
    assert removed == len(before) - len(after) > 0
