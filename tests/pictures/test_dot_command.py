"""``nkigym-graph dot``: folding and diff options, and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pictures.dot_text import all_nodes, parse, unquote

from nkigym_graph import saturate
from nkigym_graph.cli import main
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.text import write_program


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """A tiled 256^3 matmul (4 output tiles) and the program after data reuse."""
    before = tiled_matmul(256, 256, 256)
    write_program(before, tmp_path / "a.nkg")
    write_program(saturate(before, ["data_reuse"]), tmp_path / "b.nkg")
    return tmp_path / "a.nkg", tmp_path / "b.nkg"


def test_fold_by_op(files: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "op.dot"
    assert main(["dot", str(files[0]), "--fold", "op", "-o", str(out)]) == 0
    headings = {
        unquote(n.get_label()).split("\n")[0]
        for name, n in all_nodes(parse(out.read_text())).items()
        if name.startswith("g")
    }
    assert headings == {"op load", "op nc_matmul", "op store"}


def test_diff(files: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "diff.dot"
    assert main(["dot", str(files[0]), "--diff", str(files[1]), "--fold", "none", "-o", str(out)]) == 0
    title = unquote(parse(out.read_text()).get_label())
    assert title.endswith("8 removed, 0 added, 0 changed")  # 16 loads, 8 distinct ones


def test_unknown_fold_is_one_error_line_naming_the_choices(files: tuple[Path, Path], capsys) -> None:
    assert main(["dot", str(files[0]), "--fold", "tiles"]) == 2
    err = capsys.readouterr().err
    assert "unknown fold 'tiles'" in err and "auto, tile, op, none" in err
    assert len(err.strip().splitlines()) == 1


def test_a_directory_as_output_is_one_error_line(files: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    assert main(["dot", str(files[0]), "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err and len(err.strip().splitlines()) == 1


def test_expand_draws_groups_as_clusters(files: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "expanded.dot"
    assert main(["dot", str(files[0]), "--fold", "tile", "--expand", "-o", str(out)]) == 0
    clusters = [s.get_name() for s in parse(out.read_text()).get_subgraphs()]
    assert sum(name.startswith("cluster_g") for name in clusters) == 4  # one per output tile
