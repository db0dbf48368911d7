"""Random command lines, drawn from the real commands, flags and plausible or garbage
values: each either succeeds or exits with 2 (1: a failed check) and one line on
stderr; never a traceback, an internal error (exit 3) or a hang."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nkigym_graph.cli import main

KERNELS = """
import nkigym_graph as nkigym


def matmul(a, b):
    return nkigym.nc_matmul(a, b)


def relu(a):
    return nkigym.activation(a, op="relu")
"""

GARBAGE = ["", "-", "--", "x", "nope", "\u00e9\u00e8", "a=", "=1", "-1", "0", "1e9", "..", "/"]
VALUES = {
    "--shape": ["a=128x128", "b=128x256", "a=0x1", "a=10000000x10000000", "a=128x128x2", "zz", "b=1x1"],
    "--dtype": ["bf16", "fp32", "float16", "nope", "int4"],
    "--target": ["trn2", "wormhole_b0", "nope"],
    "--max-statements": ["1", "10", "1000000", "0", "x"],
    "--transforms": ["data_reuse", "data_reuse,dead_code", ",,,", "nope"],
    "--strategy": ["greedy", "beam", "random", "exhaustive", "nope"],
    "--budget": ["1", "3", "20", "0", "-1", "x"],
    "--seed": ["0", "7", "-1", "x"],
    "--workers": ["0", "-1", "x"],
    "--backend": ["nki", "buda", "cuda"],
    "--arch": ["wormhole_b0", "grayskull", "nope"],
    "--df": ["Bfp8_b", "Float16_b", "Float32", "Bfp9"],
    "--min-severity": ["info", "warning", "error", "nope"],
    "--cpu-seconds": ["0", "x"],
    "--memory-mb": ["0", "x"],
    "-o": ["{tmp}/out.nkg", "{tmp}/out.dot", "{tmp}/out.py", "{tmp}", "{tmp}/missing/dir/x"],
    "--program": ["{program}", "{tmp}/missing.nkg"],
}
POSITIONAL = {
    "tile": ["{kernels}:matmul", "{kernels}:relu", "{kernels}:nope", "{kernels}", "missing.py:f"],
    "saturate": ["{program}", "{kernels}", "{tmp}/missing.nkg", "{tmp}"],
    "search": ["{program}", "{kernels}", "{tmp}/missing.nkg"],
    "emit": ["{program}", "{kernels}", "{tmp}/missing.nkg"],
    "simulate": ["{tmp}/missing_kernel.py", "{tmp}"],
    "check-netlist": ["{program}", "{tmp}/missing.yaml"],
    "dot": ["{program}", "{tmp}/missing.nkg"],
    "ops": [],
    "transforms": [],
    "plugins": [],
}
FLAGS = {
    "tile": ["--shape", "--shape", "--dtype", "--target", "--max-statements", "--online", "-o"],
    "saturate": ["--transforms", "-o"],
    "search": [
        "--strategy",
        "--budget",
        "--seed",
        "--workers",
        "--transforms",
        "--progress",
        "--no-progress",
        "-o",
    ],
    "emit": ["--backend", "--arch", "--df", "-o"],
    "simulate": ["--program", "--shape", "--seed", "--cpu-seconds", "--memory-mb"],
    "check-netlist": ["--arch", "--strict", "--min-severity", "--rules"],
    "dot": ["-o"],
    "ops": [],
    "transforms": [],
    "plugins": [],
}
SWITCHES = {"--progress", "--no-progress", "--strict", "--rules", "--online"}


BASES = {
    "tile": [
        ["{kernels}:relu", "--shape", "a=128x128"],
        ["{kernels}:matmul", "--shape", "a=128x128", "--shape", "b=128x256"],
    ],
    "saturate": [["{program}"]],
    "search": [["{program}", "--budget", "3"]],
    "emit": [["{program}"], ["{program}", "--backend", "buda"]],
    "dot": [["{program}", "-o", "{tmp}/out.dot"]],
}
"""Valid command lines the draws start from (then extend), so success paths are fuzzed too."""


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from([*POSITIONAL, "nope"]))
    argv = [command] if draw(st.integers(0, 9)) else ["--debug-not-a-flag", command]
    if command in BASES and draw(st.booleans()):
        argv += draw(st.sampled_from(BASES[command]))
    elif POSITIONAL.get(command) and draw(st.integers(0, 5)):
        argv.append(draw(st.sampled_from(POSITIONAL[command])))
    for flag in draw(st.lists(st.sampled_from(FLAGS.get(command) or ["--help"]), max_size=3)):
        argv.append(flag)
        if flag not in SWITCHES and flag != "--help":
            plausible = draw(st.integers(0, 4)) > 0
            argv.append(draw(st.sampled_from(VALUES[flag] if plausible else GARBAGE)))
    if not draw(st.integers(0, 9)):
        argv.insert(draw(st.integers(0, len(argv))), draw(st.sampled_from(GARBAGE)))
    return argv


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("fuzz")
    kernels = tmp / "kernels.py"
    kernels.write_text(KERNELS)
    program = tmp / "p.nkg"
    assert (
        main(
            ["tile", f"{kernels}:matmul", "--shape", "a=256x128", "--shape", "b=256x256", "-o", str(program)]
        )
        == 0
    )
    return {"tmp": str(tmp), "kernels": str(kernels), "program": str(program)}


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(argv=command_lines())
def test_random_command_lines_fail_cleanly(files: dict[str, str], argv: list[str]) -> None:
    argv = [a.format(**files) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(files["tmp"]), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)  # in the scratch folder: "-o x" writes there
    text = err.getvalue()
    assert code in (0, 1, 2), (argv, code, text)
    assert "Traceback" not in text, (argv, text)
    if code == 2:
        lines = text.strip().splitlines()
        progress = [line for line in lines[:-1] if "--progress" in argv and "states/s" in line]
        assert len(lines) == 1 + len(progress), (argv, text)  # the error; progress lines if asked for
    for path in Path(files["tmp"]).iterdir():
        if path.name not in ("kernels.py", "p.nkg") and path.is_file():
            path.unlink()
