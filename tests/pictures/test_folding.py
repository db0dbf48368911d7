"""Folded pictures: groups, their counts and op mix, merged edges, the default for large programs.

Expected groups are computed here from the program's graph (networkx ancestors of each
store over data edges), not with the folding code.
"""

from __future__ import annotations

from collections import Counter

import networkx as nx
import pydot
import pytest
from pictures.dot_text import all_edges, all_nodes, parse, unquote

from nkigym_graph import DOT_FOLDS, NkigymError, Program, saturate, to_dot, to_dot_diff, write_dot
from nkigym_graph.dot import AUTO_FOLD_ABOVE, AUTO_FOLD_WIDER_THAN
from nkigym_graph.ir.synthetic import tiled_matmul


@pytest.fixture(scope="module")
def big() -> Program:
    """What tiling a 1024^3 matmul gives: 64 output tiles, 1,601 statements."""
    program = tiled_matmul(1024, 1024, 1024)
    assert len(program) == 1601
    return program


@pytest.fixture(scope="module")
def by_tile(big: Program) -> pydot.Dot:
    """``big`` folded by output tile, parsed back (once: pydot parses slowly)."""
    return parse(to_dot(big, "tile").to_string())


def _groups(graph: pydot.Dot) -> dict[str, tuple[int, Counter[str]]]:
    """Collapsed group nodes: heading -> (statement count, op counts), read from their labels."""
    found = {}
    for name, node in all_nodes(graph).items():
        if name.startswith("g"):
            heading, count_line, *mix = unquote(node.get_label()).split("\n")
            ops = Counter({op: int(n) for n, op in (line.split(" x ") for line in mix)})
            found[heading] = (int(count_line.split()[0]), ops)
    return found


def _store_groups(program: Program) -> dict[str, Counter[str]]:
    """Per store, the op counts of the statements whose data reaches that store only."""
    data = nx.DiGraph((u, v) for u, v, d in program.graph.edges(data=True) if d["uses"])
    owners: dict[int, set[int]] = {}
    for store in program.statements_of("store"):
        for node in nx.ancestors(data, store) | {store}:
            owners.setdefault(node, set()).add(store)
    groups: dict[str, Counter[str]] = {}
    for node, stores in owners.items():
        if len(stores) == 1:
            (store,) = stores
            heading = program.describe(store).split(" = ")[0]  # output[0:128, 0:128]
            groups.setdefault(heading, Counter())[program[node].op.name] += 1
    return groups


def test_default_picture_of_a_tiled_1024_cubed_matmul_is_folded_and_small(
    big: Program, by_tile: pydot.Dot, tmp_path
) -> None:
    text = write_dot(big, tmp_path / "p.dot").read_text()  # no options
    assert text == to_dot(big, "tile").to_string()
    nodes = all_nodes(by_tile)  # the same text, parsed back
    assert len(nodes) <= 100
    assert {"p_a", "p_b", "o_output", "legend"} <= set(nodes)
    assert sum(name.startswith("g") for name in nodes) == 64


def test_output_tile_groups_count_what_feeds_each_output_block(big: Program, by_tile: pydot.Dot) -> None:
    groups = _groups(by_tile)
    expected = _store_groups(big)
    assert len(expected) == 64
    assert {heading: ops for heading, (_, ops) in groups.items()} == expected
    assert all(count == sum(ops.values()) == 25 for count, ops in groups.values())
    assert groups["output[0:128, 0:128]"][1] == Counter(load=16, nc_matmul=8, store=1)


def test_shared_loads_fold_with_the_tiles_they_feed(big: Program) -> None:
    shared = saturate(tiled_matmul(512, 256, 512), ["data_reuse"])  # each load feeds 4 tiles
    graph = parse(to_dot(shared, "tile").to_string())
    groups, nodes = _groups(graph), all_nodes(graph)
    unfolded = sum(name.startswith("n") for name in nodes)
    assert sum(count for count, _ in groups.values()) + unfolded == len(shared)
    assert len(groups) <= 100


def test_op_fold_counts_statements_by_op(big: Program) -> None:
    groups = _groups(parse(to_dot(big, "op").to_string()))
    counts = Counter(stmt.op.name for stmt in big.statements)
    assert {h: c for h, (c, _) in groups.items()} == {f"op {op}": n for op, n in counts.items() if n > 1}


def test_a_function_folds_by_its_key(big: Program) -> None:
    groups = _groups(parse(to_dot(big, lambda stmt: stmt.op.engine).to_string()))
    counts = Counter(stmt.op.engine for stmt in big.statements)
    assert {h: c for h, (c, _) in groups.items()} == {e: n for e, n in counts.items() if n > 1}


def test_merged_edges_carry_counts(by_tile: pydot.Dot) -> None:
    nodes = all_nodes(by_tile)
    first = next(
        n for n, node in nodes.items() if unquote(node.get_label()).startswith("output[0:128, 0:128]\n")
    )
    reads = {
        e.get_source(): unquote(e.get_label())
        for e in all_edges(by_tile)
        if e.get_destination() == first and e.get_source().startswith("p_")
    }
    assert reads == {"p_a": "×8", "p_b": "×8"}  # 8 K chunks of each operand per tile


def test_fold_none_draws_every_statement(big: Program) -> None:
    nodes = all_nodes(to_dot(big, None))  # not parsed back: 1,601 nodes parse slowly
    assert {f"n{i}" for i in range(len(big))} <= set(nodes)
    assert not any(name.startswith("g") for name in nodes)


def test_expanded_groups_are_clusters_holding_their_statements() -> None:
    program = tiled_matmul(256, 256, 256)  # 4 output tiles of 7 statements
    graph = parse(to_dot(program, "tile", collapse=False).to_string())
    clusters = [s for s in graph.get_subgraphs() if s.get_name().startswith("cluster_g")]
    assert len(clusters) == 4
    for cluster in clusters:
        members = [n for n in cluster.get_nodes() if n.get_name().startswith("n")]
        assert unquote(cluster.get_label()).split("\n")[1] == f"{len(members)} statements:"


def test_unknown_fold_names_the_choices() -> None:
    with pytest.raises(NkigymError, match="auto, tile, op, none"):
        to_dot(tiled_matmul(128, 128, 128), "tiles")
    assert DOT_FOLDS == ("auto", "tile", "op", "none")


def test_auto_fold_merges_more_than_64_tiles_into_an_8_by_8_grid_of_regions() -> None:
    program = tiled_matmul(2048, 128, 1024)  # 16 x 8 = 128 output tiles of 4 statements
    text = to_dot(program).to_string()
    groups = _groups(parse(text))
    assert "folded by output region (an 8 x 8 grid over each output)" in text  # the title says so
    assert "by output tile" not in text
    assert len(groups) == 64  # regions of 256 x 128: two tiles each
    assert {count for count, _ in groups.values()} == {8}
    assert groups["output[0:256, 0:128]"][1] == Counter(load=4, nc_matmul=2, store=2)
    assert len(_groups(parse(to_dot(program, "tile").to_string()))) == 128  # asked for tiles: tiles


def test_a_group_of_several_regions_counts_regions_not_tiles() -> None:
    """The loads of ``b`` for the 8 column tiles of one column of the grid (1040 wide) feed
    16 output tiles, in 2 regions of the grid: their group is labelled with 2 regions, not
    as 2 tiles."""
    program = saturate(tiled_matmul(256, 128, 8320), ["data_reuse"])  # 2 x 65 output tiles
    headings = [heading for heading in _groups(parse(to_dot(program).to_string())) if " of " in heading]
    assert headings and all(heading.startswith("2 regions of output[0:256, ") for heading in headings)


def test_a_fold_function_must_return_hashable_keys() -> None:
    with pytest.raises(NkigymError, match="unhashable list for statement"):
        to_dot(tiled_matmul(128, 128, 128), lambda stmt: [stmt.op.name])


def test_pictures_take_programs_only() -> None:
    with pytest.raises(NkigymError, match=r"program must be a Program .*, got str"):
        to_dot("def f(a): ...")  # type: ignore[arg-type]
    with pytest.raises(NkigymError, match=r"program must be a Program or a pydot\.Dot"):
        write_dot(None, "p.dot")  # type: ignore[arg-type]


def test_a_fold_function_that_fails_is_named_with_the_statement() -> None:
    def by_width(stmt):  # type: ignore[no-untyped-def]
        raise ValueError("no width")

    with pytest.raises(NkigymError, match=r"fold function 'by_width' failed on statement .*ValueError: no"):
        to_dot(tiled_matmul(128, 128, 256), fold=by_width)


def test_a_pydot_picture_is_written_as_drawn_and_refuses_fold_options(tmp_path) -> None:  # type: ignore[no-untyped-def]
    picture = to_dot(tiled_matmul(128, 128, 256))
    with pytest.raises(NkigymError, match="fold and collapse apply to a Program"):
        write_dot(picture, tmp_path / "p.dot", fold="op")
    assert write_dot(picture, tmp_path / "p.dot").read_text().startswith("digraph")


def test_auto_fold_folds_a_picture_too_wide_to_read() -> None:
    wide = tiled_matmul(512, 512, 512)  # 209 statements, 128 loads side by side
    assert len(wide) < AUTO_FOLD_ABOVE
    loads = set(wide.statements_of("load"))
    assert len(loads) > AUTO_FOLD_WIDER_THAN
    drawn = to_dot(wide)
    assert "folded by output tile" in drawn.to_string()
    assert not {f"n{node}" for node in loads} & set(all_nodes(drawn))
    diff = to_dot_diff(wide, saturate(wide)).to_string()
    assert "folded by output tile" in diff
    narrow = tiled_matmul(256, 256, 256)  # 16 loads side by side: every statement drawn
    assert {f"n{node}" for node in narrow.ids} <= set(all_nodes(to_dot(narrow)))
