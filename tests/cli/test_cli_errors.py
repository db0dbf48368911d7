"""Command-line mistakes: a named error on one stderr line, exit code 2 (1: a failed check)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import nkigym_graph as ng
from nkigym_graph import Transform
from nkigym_graph.cli import main
from nkigym_graph.text import read_program

USER_CODE = """
import nkigym_graph as nkigym


def matmul(a, b):
    return nkigym.nc_matmul(a, b)


def typo(a):
    return nkigym.activaton(a)


def raises(a):
    raise RuntimeError("my kernel is broken")


def arity(a):
    return nkigym.nc_matmul(a)


def recurses(a):
    return recurses(a)


def exits(a):
    import sys

    sys.exit(0)
"""


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    path = tmp_path / "user.py"
    path.write_text(USER_CODE)
    return path


@pytest.fixture
def matmul_file(user_file: Path, tmp_path: Path) -> Path:
    out = tmp_path / "m.nkg"
    assert (
        main(["tile", f"{user_file}:matmul", "--shape", "a=256x128", "--shape", "b=256x256", "-o", str(out)])
        == 0
    )
    return out


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_dtype_aliases_are_accepted(user_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "bf.nkg"
    argv = ["tile", f"{user_file}:matmul", "--shape", "a=128x128", "--shape", "b=128x128", "--dtype", "bf16"]
    assert main([*argv, "-o", str(out)]) == 0
    assert {p.dtype for p in read_program(out).params} == {"bfloat16"}


def test_an_unknown_dtype_names_the_flag_and_the_choices(user_file: Path, capsys) -> None:
    argv = ["tile", f"{user_file}:matmul", "--shape", "a=128x128", "--shape", "b=128x128", "--dtype", "nope"]
    assert main(argv) == 2
    line = _one_line(capsys)
    assert "--dtype: 'nope' is not a supported dtype; choose one of float32, bfloat16" in line


@pytest.mark.parametrize(
    ("func", "problem"),
    [
        ("typo", r"tracing 'typo' failed: AttributeError: .*'activaton' \(at .*user.py:10: `return nkigym"),
        ("raises", r"tracing 'raises' failed: RuntimeError: my kernel is broken \(at .*user.py:14"),
        ("arity", r"tracing 'arity' failed: TypeError: nc_matmul\(\) missing 1 required positional argument"),
        ("recurses", r"tracing 'recurses' failed: RecursionError: maximum recursion depth exceeded"),
        ("exits", r"tracing 'exits' failed: SystemExit: 0 \(at .*user.py:28: `sys.exit\(0\)`\)"),
    ],
)
def test_a_failing_user_function_is_one_named_line(user_file: Path, func: str, problem: str, capsys) -> None:
    assert main(["tile", f"{user_file}:{func}", "--shape", "a=128x128"]) == 2
    assert re.search(problem, _one_line(capsys))


def test_a_syntax_error_in_the_users_file(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(a):\n    return nkigym.activation(a\n")
    assert main(["tile", f"{bad}:f", "--shape", "a=128x128"]) == 2
    line = _one_line(capsys)
    assert f"{bad}:2: syntax error" in line


def test_a_users_file_that_raises_on_import(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nsys.exit(3)\n")
    assert main(["tile", f"{bad}:f", "--shape", "a=128x128"]) == 2
    assert f"running {bad} failed: SystemExit: 3" in _one_line(capsys)


def test_statement_limit_flag(user_file: Path, capsys) -> None:
    argv = [
        "tile",
        f"{user_file}:matmul",
        "--shape",
        "a=128x128",
        "--shape",
        "b=128x256",
        "--max-statements",
        "5",
    ]
    assert main(argv) == 2
    assert "would have 9 statements, over the limit of 5" in _one_line(capsys)
    assert main(["tile", f"{user_file}:matmul", "--shape", "a=128x128", "--max-statements", "0"]) == 2
    assert "--max-statements: expected a positive integer, got 0" in _one_line(capsys)


class _Broken(Transform):
    name = "broken_analysis"

    def analyze(self, program):
        return [1 / 0]


class _BrokenPlugin:
    @ng.hookimpl
    def nkigym_graph_register_transforms(self):
        return [_Broken]


@pytest.fixture
def broken_plugin():
    plugin = _BrokenPlugin()
    ng.register_plugin(plugin, name="broken_plugin")
    yield plugin
    ng.unregister_plugin(plugin)


@pytest.mark.parametrize("command", ["saturate", "search"])
def test_a_plugin_transform_raising_names_plugin_and_transform(
    broken_plugin, matmul_file: Path, command: str, capsys
) -> None:
    extra = ["--budget", "3", "--no-progress"] if command == "search" else []
    assert main([command, str(matmul_file), "--transforms", "broken_analysis", *extra]) == 2
    line = _one_line(capsys)
    assert "transform 'broken_analysis' (plugin 'broken_plugin'" in line
    assert "failed in analyze: ZeroDivisionError: division by zero" in line


def test_a_plugin_transform_raising_in_the_python_api(broken_plugin, matmul_file: Path) -> None:
    program = read_program(matmul_file)
    for call in (
        lambda: ng.analyze(program, "broken_analysis"),
        lambda: ng.matches_of(program, "broken_analysis"),
        lambda: ng.saturate(program, ["broken_analysis"]),
        lambda: ng.explain(program, "broken_analysis", 0, 1),
    ):
        with pytest.raises(
            ng.TransformError, match=r"'broken_analysis' \(plugin 'broken_plugin'.*ZeroDivision"
        ):
            call()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "{program}", "--workers", "0"], "argument --workers: expected a positive integer, got 0"),
        (["search", "{program}", "--budget", "-5"], "argument --budget: expected a positive integer, got -5"),
        (
            ["search", "{program}", "--seconds", "0"],
            "argument --seconds: expected a number of seconds > 0, got 0",
        ),
        (
            ["search", "{program}", "--seconds", "soon"],
            "argument --seconds: expected a number of seconds, got 'soon'",
        ),
        (["saturate", "{program}", "--transforms", ",,,"], "--transforms: no transform names in ',,,'"),
        (["search", "{program}", "--transforms", " , "], "--transforms: no transform names in ' , '"),
        (["tile", "x.py:f", "--shape", "a=1x1", "--max-statements", "many"], "expected a positive integer"),
        (["simulate", "k.py", "--cpu-seconds", "0"], "argument --cpu-seconds: expected a positive integer"),
        (["simulate", "k.py", "--seed", "-1"], "argument --seed: expected a non-negative integer, got -1"),
        (["profile", "k.py", "--seed", "-1"], "argument --seed: expected a non-negative integer, got -1"),
        (["search", "{program}", "--seed", "-1"], "argument --seed: expected a non-negative integer, got -1"),
        (["profile", "k.py", "--dtype", "bf17"], "argument --dtype: 'bf17' is not an NKI dtype"),
        (  # the choices listed are the ones emit takes (not int8, which it would refuse)
            ["emit", "{program}", "--dtype", "int8"],
            "argument --dtype: 'int8' is not a dtype an NKI kernel can be emitted in; choose one of "
            "float32, bfloat16, float16, float8_e4m3, float8_e5m2 (aliases",
        ),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["tile"], "the following arguments are required: FILE.py:FUNC"),
    ],
)
def test_refused_arguments(argv: list[str], message: str, matmul_file: Path, capsys) -> None:
    assert main([a.format(program=matmul_file) for a in argv]) == 2
    assert message in _one_line(capsys)


WRITERS = [
    ["tile", "x.py:f", "-o"],
    ["saturate", "{program}", "-o"],
    ["search", "{program}", "-o"],
    ["emit", "{program}", "-o"],
    ["dot", "{program}", "-o"],
    ["profile", "k.py", "--trace"],
    ["profile", "k.py", "--timeline"],
]


@pytest.mark.parametrize("argv", WRITERS)
@pytest.mark.parametrize(
    ("output", "problem"),
    [("{dir}", "{dir} is a directory; give a file name"), ("{dir}/no/k.py", "{dir}/no does not exist")],
)
def test_a_file_that_cannot_be_written_is_refused_first(
    argv: list[str], output: str, problem: str, matmul_file: Path, tmp_path: Path, capsys
) -> None:
    output, problem = output.format(dir=tmp_path), problem.format(dir=tmp_path)
    assert main([*(a.format(program=matmul_file) for a in argv), output]) == 2
    line = _one_line(capsys)
    assert f"argument {argv[-1]}" in line and problem in line


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (every write fails)")
def test_a_write_that_fails_names_the_file(matmul_file: Path, capsys) -> None:
    assert main(["emit", str(matmul_file), "-o", "/dev/full"]) == 2
    assert "cannot write /dev/full: No space left on device" in _one_line(capsys)


def test_long_error_messages_are_cut(tmp_path: Path, capsys) -> None:
    huge = tmp_path / "huge.nkg"
    name = "x" * 100_000
    huge.write_text(
        f'def f(a):\n    t = a[0:128, 0:128]\n    u = nkigym.activation(t, op="{name}")\n    return u\n'
    )
    assert main(["saturate", str(huge)]) == 2
    line = _one_line(capsys)
    assert len(line) < 800 and "characters cut" in line


def test_an_internal_error_is_one_line_with_exit_3(monkeypatch, capsys) -> None:
    from nkigym_graph.cli import commands

    def crash(args):
        raise KeyError("bug")

    monkeypatch.setattr(commands, "transforms", crash)
    assert main(["transforms"]) == 3
    assert "internal error: KeyError: 'bug' (run with --debug for the traceback)" in _one_line(capsys)


def test_wrong_arguments_to_the_transform_functions(matmul_file: Path) -> None:
    program = read_program(matmul_file)
    for call, name in (
        (lambda: ng.analyze(None, "data_reuse"), "analyze"),  # type: ignore[arg-type]
        (lambda: ng.matches_of("text", "data_reuse"), "matches_of"),  # type: ignore[arg-type]
        (lambda: ng.saturate(None), "saturate"),  # type: ignore[arg-type]
        (lambda: ng.explain(None, "data_reuse", 0, 1), "explain"),  # type: ignore[arg-type]
    ):
        with pytest.raises(ng.TransformError, match=rf"^{name}: program must be a Program, got"):
            call()
    with pytest.raises(ng.TransformError, match=r"saturate: names must be a list of transform names"):
        ng.saturate(program, "data_reuse")  # type: ignore[arg-type]


def test_a_plugin_package_that_fails_to_import_is_named(monkeypatch) -> None:
    from importlib import metadata

    from nkigym_graph.plugin import manager as plugin_manager

    broken = metadata.EntryPoint("broken_pkg", "no_such_module_for_nkigym_tests", "nkigym_graph")
    pm = plugin_manager.pluggy.PluginManager("nkigym_graph")
    with pytest.raises(
        ng.PluginError, match=r"plugin 'broken_pkg' \(entry point no_such_module.*\) failed to load: "
    ):
        plugin_manager._register_entry_point(pm, broken)


def test_debug_after_the_command_shows_the_traceback(capsys) -> None:
    assert main(["tile", "missing.py:f", "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "UsageError: no such file: missing.py" in err
    assert err.strip().splitlines()[-1] == "nkigym-graph tile: error: no such file: missing.py"


def test_debug_adds_the_traceback_and_keeps_the_exit_code(tmp_path: Path) -> None:
    bad = tmp_path / "bad.nkg"
    bad.write_text("def f(a):\n    tensor_0 = a[0:128, 0:128\n")
    done = subprocess.run(
        [sys.executable, "-m", "nkigym_graph", "--debug", "saturate", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2  # bad input, as without --debug
    assert "Traceback" in done.stderr and "ParseError" in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("nkigym-graph saturate: error: line 2")


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("garbage\n", "it holds a single value, 'garbage'"),
        ("- queues\n- graphs\n", "it holds a list"),
        ("# only a comment\n", "it holds nothing"),
    ],
)
def test_check_netlist_says_what_a_file_holds_instead(text: str, found: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / "g.nkg"
    path.write_text(text)
    assert main(["check-netlist", str(path)]) == 2
    line = _one_line(capsys)
    assert f"{path} is not a netlist: {found}" in line
    assert "pathlib" not in line and "Marked" not in line and "path=" not in line
