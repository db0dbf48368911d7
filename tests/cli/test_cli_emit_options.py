"""``emit``'s backend flags: a flag the chosen backend does not take is named as a flag
(not as a Python keyword argument), and ``--df`` takes a Buda data format in any case."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import nkigym_graph as ng
from nkigym_graph.cli import main
from nkigym_graph_plugins.buda_backend.arch import get_arch
from nkigym_graph_plugins.buda_backend.errors import BudaEmitError


def matmul(a: object, b: object) -> object:
    return ng.nc_matmul(a, b)


@pytest.fixture
def program_file(tmp_path: Path) -> Path:
    path = tmp_path / "p.nkg"
    ng.write_program(ng.tile(matmul, {"a": (64, 64), "b": (64, 64)}, target=ng.WORMHOLE_B0), path)
    return path


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("backend", "flags", "named", "takes"),
    [
        ("buda", ["--dtype", "fp32"], "--dtype", "the buda backend takes --arch and --df"),
        ("nki", ["--df", "Bfp8_b"], "--df", "the nki backend takes --dtype"),
        ("nki", ["--arch", "wormhole_b0"], "--arch", "the nki backend takes --dtype"),
        ("nki", ["--arch", "grayskull", "--df", "Bfp8_b"], "--arch and --df", "the nki backend takes"),
    ],
)
def test_a_flag_the_backend_does_not_take_is_named_as_a_flag(
    backend: str,
    flags: list[str],
    named: str,
    takes: str,
    program_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["emit", str(program_file), "--backend", backend, *flags]) == 2
    err = _one_line_error(capsys)
    assert f"{named} " in err and takes in err
    for keyword in ("arch=", "df=", "allow_over_limit", "fit_memory", "roll_loops", "['"):
        assert keyword not in err


@pytest.mark.parametrize("df", ["bfp8_b", "BFP8_B", "Bfp8_b"])
def test_df_takes_a_data_format_in_any_case(df: str, program_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "n.yaml"
    assert main(["emit", str(program_file), "--backend", "buda", "--df", df, "-o", str(out)]) == 0
    queues = yaml.safe_load(out.read_text())["queues"]
    assert {queue["df"] for queue in queues.values()} == {"Bfp8_b"}


def test_an_unknown_data_format_is_refused_naming_the_formats(
    program_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["emit", str(program_file), "--backend", "buda", "--df", "bfp9"]) == 2
    err = _one_line_error(capsys)
    assert "'bfp9'" in err and "Bfp8_b" in err and "Float16_b" in err


def test_the_api_takes_a_data_format_in_any_case_and_spells_it_as_the_backend_does() -> None:
    assert get_arch("wormhole_b0", df="float16_b").df == "Float16_b"
    assert get_arch("grayskull", df="BFP8_B").df == "Bfp8_b"
    program = ng.tile(matmul, {"a": (64, 64), "b": (64, 64)}, target=ng.WORMHOLE_B0)
    artifact = ng.emit_artifact(program, backend="buda", df="float16")
    assert {queue["df"] for queue in artifact.parsed["queues"].values()} == {"Float16"}
    with pytest.raises(BudaEmitError, match="no Float32 data path"):
        get_arch("grayskull", df="float32")
    with pytest.raises(BudaEmitError, match="got 'fp8'"):
        get_arch("grayskull", df="fp8")


@pytest.mark.parametrize(
    ("value", "arch", "says"),
    [
        (
            "bfp9",
            "wormhole_b0",
            "--df must be one of Float32, Float16_b, Float16, Bfp8_b (in any case), got 'bfp9'",
        ),
        ("float32", "grayskull", "--df is Float32, but grayskull has no Float32 data path"),
    ],
)
def test_a_bad_df_value_names_the_flag(
    value: str, arch: str, says: str, program_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["emit", str(program_file), "--backend", "buda", "--arch", arch, "--df", value]) == 2
    err = _one_line_error(capsys)
    assert f"nkigym-graph emit: error: {says}" in err
    assert " df " not in err and "df=" not in err
