"""The main job (``./run main``) runs the whole pipeline and writes its results."""

from __future__ import annotations

import shutil
from pathlib import Path

import nkigym_graph as ng
from nkigym_graph.main_job import main
from nkigym_graph.text import read_program


def test_main_job_end_to_end(tmp_path: Path, capsys) -> None:
    assert main(["--out", str(tmp_path), "--size", "256"]) == 0
    summary = capsys.readouterr().out
    assert "matmul 256^3 on trn2" in summary and "not measured" in summary
    assert "modeled (cost model) MFU" in summary and "profiled (timing model" in summary
    assert '"traceEvents"' in (tmp_path / "kernel_trace.json").read_text()
    best = read_program(tmp_path / "best.nkg")
    assert len(best) < len(ng.tile(ng.nc_matmul, {"lhs": (256, 256), "rhs": (256, 256)}))
    kernel = (tmp_path / "kernel.py").read_text()
    assert "@nki.jit" in kernel and "nisa.nc_matmul(" in kernel
    assert (tmp_path / "summary.txt").read_text().strip() == summary.strip()
    picture = tmp_path / ("best.svg" if shutil.which("dot") else "best.dot")
    assert picture.read_text().lstrip().startswith(("<?xml", "<svg", "digraph"))


def test_run_script_is_valid_bash() -> None:
    import subprocess

    root = Path(__file__).parents[1]
    assert subprocess.run(["bash", "-n", str(root / "run")], check=False).returncode == 0
    assert subprocess.run(["bash", "-n", str(root / ".ci" / "run")], check=False).returncode == 0
