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


def test_profile_with_the_program_takes_its_shapes_and_dtypes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bf16 kernel profiled without ``--dtype`` was timed on fp32 inputs (and its MFU
    taken against the fp32 peak); ``--program`` gives each input its parameter's dtype."""

    def matmul(a: object, b: object) -> object:
        return ng.nc_matmul(a, b)

    program = ng.saturate(ng.tile(matmul, {"a": (256, 256), "b": (256, 512)}, dtype="bfloat16"))
    ng.write_program(program, tmp_path / "p.nkg")
    kernel = tmp_path / "kernel.py"
    kernel.write_text(ng.emit(program, backend="nki"))
    assert main(["profile", str(kernel), "--program", str(tmp_path / "p.nkg")]) == 0
    assert "(bfloat16)" in capsys.readouterr().out
    assert main(["profile", str(kernel), "--program", str(tmp_path / "p.nkg"), "--dtype", "fp32"]) == 0
    assert "(float32)" in capsys.readouterr().out  # --dtype still chooses


def test_emit_takes_the_kernels_dtype(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A float64 program needs ``emit(..., dtype=...)``: the command line has ``--dtype``."""

    def matmul(a: object, b: object) -> object:
        return ng.nc_matmul(a, b)

    ng.write_program(ng.tile(matmul, {"a": (128, 128), "b": (128, 128)}, dtype="float64"), tmp_path / "p.nkg")
    assert main(["emit", str(tmp_path / "p.nkg"), "-o", str(tmp_path / "k.py")]) != 0
    assert "dtype" in capsys.readouterr().err
    assert main(["emit", str(tmp_path / "p.nkg"), "--dtype", "fp32", "-o", str(tmp_path / "k.py")]) == 0
    assert "float32" in (tmp_path / "k.py").read_text()
