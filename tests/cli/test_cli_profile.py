"""``nkigym-graph profile``: the timing model from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nkigym_graph as ng
from nkigym_graph.cli import main


def _kernel(tmp_path: Path) -> Path:
    def matmul(a: object, b: object) -> object:
        return ng.nc_matmul(a, b)

    program = ng.saturate(ng.tile(matmul, {"a": (256, 256), "b": (256, 512)}))
    path = tmp_path / "kernel.py"
    path.write_text(ng.emit(program, backend="nki"))
    return path


def test_profile_prints_the_summary_and_writes_a_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = _kernel(tmp_path)
    trace = tmp_path / "kernel.json"
    argv = ["profile", str(kernel), "--shape", "a=256x256", "--shape", "b=256x512", "--trace", str(trace)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "profiled" in out and "not measured" in out and "MFU" in out
    assert "trace:" in out
    assert json.loads(trace.read_text())["traceEvents"]


@pytest.mark.parametrize("alias", ["bfloat16", "bf16", "nl.bfloat16"])
def test_profile_in_bf16_by_any_of_its_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], alias: str
) -> None:
    kernel = _kernel(tmp_path)
    argv = ["profile", str(kernel), "--shape", "a=256x256", "--shape", "b=256x512", "--dtype", alias]
    assert main(argv) == 0
    assert "(bfloat16)" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["profile", "simulate"])
def test_shapes_must_name_the_kernels_parameters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    kernel = _kernel(tmp_path)
    argv = [command, str(kernel), "--shape", "a=256x256", "--shape", "c=256x512", "--shape", "d=1x1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"the kernel matmul(a, b) in {kernel} has no parameter(s) 'c', 'd': give --shape" in err


def test_shapes_are_passed_in_the_kernels_parameter_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = _kernel(tmp_path)  # a 256x256 @ 256x512 matmul: swapped inputs would not fit
    assert main(["simulate", str(kernel), "--shape", "b=256x512", "--shape", "a=256x256"]) == 0
    assert "output (256, 512)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [([], "--shape"), (["--shape", "a=256x256", "--shape", "b=256x512", "--dtype", "int4"], "dtype")],
)
def test_profile_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    kernel = _kernel(tmp_path)
    assert main(["profile", str(kernel), *extra]) == 2
    assert message in capsys.readouterr().err
