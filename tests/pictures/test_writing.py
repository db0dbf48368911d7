"""Writing pictures: byte-identical output, and named errors for paths that cannot be written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import seed_text

from nkigym_graph import NkigymError, parse_program, saturate, to_dot_diff, write_dot
from nkigym_graph.ir.synthetic import tiled_matmul

PICTURES = """
import sys
import nkigym_graph as ng
from nkigym_graph.ir.synthetic import tiled_matmul
big = tiled_matmul(512, 768, 512)  # 16 tiles, 433 statements: folded by default
after = ng.saturate(big, ["data_reuse"])
sys.stdout.write(ng.to_dot(big).to_string() + ng.to_dot(big, "op").to_string())
sys.stdout.write(ng.to_dot_diff(big, after).to_string())
"""


def test_same_program_gives_byte_identical_dot_across_processes() -> None:
    texts = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        run = subprocess.run([sys.executable, "-c", PICTURES], env=env, capture_output=True, check=True)
        texts.append(run.stdout)
    assert texts[0] == texts[1]
    assert texts[0].count(b"digraph") == 3


def test_write_dot_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    program = tiled_matmul(256, 256, 256)
    first = write_dot(program, tmp_path / "a.dot").read_bytes()
    assert write_dot(program, tmp_path / "b.dot").read_bytes() == first


def test_a_diff_picture_can_be_written(tmp_path: Path) -> None:
    before = parse_program(seed_text("001_program_before"))
    after = parse_program(seed_text("001_program_after"))
    path = write_dot(to_dot_diff(before, after), tmp_path / "diff.dot")
    assert path.read_text().startswith("digraph")


def test_a_directory_is_a_named_error(tmp_path: Path) -> None:
    with pytest.raises(NkigymError, match="is a directory"):
        write_dot(tiled_matmul(128, 128, 128), tmp_path)
    with pytest.raises(NkigymError, match="is a directory"):
        write_dot(tiled_matmul(128, 128, 128), ".")


def test_an_unwritable_path_is_a_named_error(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "folder" / "p.dot"
    with pytest.raises(NkigymError, match=r"cannot write picture .*p\.dot"):
        write_dot(tiled_matmul(128, 128, 128), missing)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_graphviz_renders_folded_and_diff_pictures(tmp_path: Path) -> None:
    program = tiled_matmul(512, 256, 512)
    folded = write_dot(program, tmp_path / "folded.svg", fold="tile")
    diff = write_dot(to_dot_diff(program, saturate(program, ["data_reuse"])), tmp_path / "diff.svg")
    for path in (folded, diff):
        assert path.read_text().lstrip().startswith(("<?xml", "<svg"))
