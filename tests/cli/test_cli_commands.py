"""The command line: each command, and the user-error paths with their exit codes."""

from __future__ import annotations

import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from buda.builders import fused_netlist, sub

import nkigym_graph as ng
from nkigym_graph.cli import main
from nkigym_graph.text import read_program

KERNELS = """
import nkigym_graph as nkigym


def matmul_tanh(a, b):
    return nkigym.activation(nkigym.nc_matmul(a, b), op="tanh")


def softmax(x):
    m = nkigym.tensor_reduce(x, op="max")
    e = nkigym.activation(x, op="exp", bias=nkigym.tensor_scalar(m, -1.0, op="multiply"))
    return nkigym.tensor_scalar(e, nkigym.activation(nkigym.tensor_reduce(e, op="sum"), op="reciprocal"))
"""


@pytest.fixture
def kernels(tmp_path: Path) -> Path:
    path = tmp_path / "kernels.py"
    path.write_text(KERNELS)
    return path


@pytest.fixture
def program_file(kernels: Path, tmp_path: Path) -> Path:
    out = tmp_path / "p.nkg"
    assert (
        main(
            ["tile", f"{kernels}:matmul_tanh", "--shape", "a=256x256", "--shape", "b=256x512", "-o", str(out)]
        )
        == 0
    )
    return out


def test_tile_writes_a_program_file_that_reads_back(program_file: Path) -> None:
    program = read_program(program_file)
    assert program.parameter("a").shape == (256, 256)
    assert len(program.statements_of("activation")) == 8  # 2 x 4 output tiles of 128


def test_tile_to_stdout(kernels: Path, capsys) -> None:
    assert main(["tile", f"{kernels}:matmul_tanh", "--shape", "a=128x128", "--shape", "b=128x128"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# nkigym-graph program: target=trn2")
    assert "nkigym.nc_matmul(tensor_0, tensor_1)" in out


def test_tile_online_gives_the_one_pass_form_as_tile_does(kernels: Path, tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("kernels", kernels)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shapes = {"x": (128, 1024)}
    for flags, online in (([], False), (["--online"], True)):
        out = tmp_path / f"softmax_{online}.nkg"
        assert main(["tile", f"{kernels}:softmax", "--shape", "x=128x1024", *flags, "-o", str(out)]) == 0
        assert read_program(out) == ng.tile(module.softmax, shapes, online=online)
    assert read_program(tmp_path / "softmax_True.nkg") != read_program(tmp_path / "softmax_False.nkg")


def test_saturate_and_dot(program_file: Path, tmp_path: Path) -> None:
    saturated = tmp_path / "s.nkg"
    assert main(["saturate", str(program_file), "-o", str(saturated)]) == 0
    assert len(read_program(saturated)) < len(read_program(program_file))
    assert main(["dot", str(saturated), "-o", str(tmp_path / "s.dot")]) == 0
    assert (tmp_path / "s.dot").read_text().startswith("digraph")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_dot_svg(program_file: Path, tmp_path: Path) -> None:
    assert main(["dot", str(program_file), "-o", str(tmp_path / "p.svg")]) == 0
    assert "<svg" in (tmp_path / "p.svg").read_text()


def test_transforms_and_plugins_listings(capsys) -> None:
    assert main(["transforms"]) == 0
    listing = capsys.readouterr().out
    for name in ("data_reuse", "operand_merge", "free_dim_merge", "dead_code"):
        assert name in listing
    assert main(["plugins"]) == 0
    assert "nkigym_graph_plugins.operand_merge" in capsys.readouterr().out


class _Undocumented(ng.Transform):
    name = "undocumented"

    def analyze(self, program: ng.Program) -> list[ng.Match]:
        return []


class _Described(ng.Transform):
    """Fold a copy into its reader: the copy goes, and its reader reads the
    copied tile. Another sentence.

    Before/after example."""

    name = "described"

    def analyze(self, program: ng.Program) -> list[ng.Match]:
        return []


def test_transforms_listing_gives_each_transform_its_first_sentence(capsys) -> None:
    plugin = types.ModuleType("listed", "Transforms of the listing test.\n\nMore words.")
    plugin.nkigym_graph_register_transforms = ng.hookimpl(lambda: [_Undocumented, _Described])  # type: ignore[attr-defined]
    ng.register_plugin(plugin, name="listed")
    try:
        assert main(["transforms"]) == 0
    finally:
        ng.unregister_plugin(plugin)
    lines = {line.split()[0]: line.split(None, 1)[1] for line in capsys.readouterr().out.splitlines()}
    assert lines["described"] == (
        "Fold a copy into its reader: the copy goes, and its reader reads the copied tile."
    )
    assert lines["undocumented"] == "(no description)"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tile", "missing.py:f", "--shape", "a=1x1"], "no such file: missing.py"),
        (["tile", "{kernels}:nope"], "has no function 'nope'; functions there: matmul_tanh"),
        (["tile", "{kernels}:matmul_tanh", "--shape", "a=12xbanana"], "bad shape 'a=12xbanana'"),
        (["tile", "{kernels}:matmul_tanh", "--shape", "a=256x256", "--shape", "b=128x512"], "size mismatch"),
        (["saturate", "{program}", "--transforms", "fuse_everything"], "unknown transform 'fuse_everything'"),
        (["emit", "{program}", "--backend", "cuda"], "unknown backend 'cuda'"),
        (["saturate", "nothing.nkg"], "no such file: nothing.nkg"),
        (["saturate", "{folder}"], "{folder} is a directory, not a file"),
        (["tile", "{folder}:f", "--shape", "a=1x1"], "{folder} is a directory, not a file"),
        (["simulate", "{folder}", "--shape", "a=1x1"], "{folder} is a directory, not a file"),
        (["check-netlist", "{folder}"], "{folder} is a directory, not a file"),
    ],
)
def test_user_errors_exit_2_with_one_line(argv, message, kernels, program_file, tmp_path, capsys) -> None:
    argv = [a.format(kernels=kernels, program=program_file, folder=tmp_path) for a in argv]
    message = message.format(folder=tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_program_file_is_a_user_error(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.nkg"
    bad.write_text("def f(a):\n    tensor_0 = a[0:128, 0:128\n")
    assert main(["saturate", str(bad)]) == 2
    assert "line 2" in capsys.readouterr().err


def test_netlist_check_exit_codes(tmp_path: Path, capsys) -> None:
    valid = (Path(__file__).parents[1] / "buda" / "netlists" / "matmul_bias_relu.yaml").read_text()
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(valid)
    bad.write_text(valid.replace("intermediates: 1", "intermediates: 9"))
    assert main(["check-netlist", str(good)]) == 0
    assert "no violations" in capsys.readouterr().out
    assert main(["check-netlist", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "error: limits.intermediates" in out and "fails (1 error(s), 0 warning(s), 0 info(s))" in out
    assert main(["check-netlist", str(tmp_path / "absent.yaml")]) == 2
    (tmp_path / "broken.yaml").write_text("graphs: [unclosed")
    assert main(["check-netlist", str(tmp_path / "broken.yaml")]) == 2


def _severities_netlist(with_errors: bool) -> str:
    """A warning (dest forked: general.2), an info note (a split after a multiply) and, with
    ``with_errors``, a second schedule's matmul on grid [1, 2] (info) whose result is never
    popped (an error)."""
    first = [
        sub("a", "datacopy", ["input0"], "dest"),
        sub("b", "add", ["dest", "input1"], "intermed0"),
        sub(
            "c",
            "multiply",
            ["dest", "intermed0"],
            "output" if not with_errors else "intermed1",
            pop="[intermed0]",
        ),
    ]
    if not with_errors:
        return fused_netlist([first], grid=(1, 2))
    later = [
        [
            sub(
                "m",
                "matmul",
                ["intermed1", "input1"],
                "intermed0",
                pop="[intermed1]",
                attributes="{m_k: 1, u_kt: 1}",
            )
        ],
        [sub("d", "datacopy", ["intermed0"], "output")],
    ]
    return fused_netlist([first, *later], grid=(1, 2), intermediates=2)


def test_check_netlist_severities_strict_and_min_severity(tmp_path: Path, capsys) -> None:
    path = tmp_path / "n.yaml"
    path.write_text(_severities_netlist(with_errors=False))
    assert main(["check-netlist", str(path)]) == 0
    out = capsys.readouterr().out
    assert "warning: general.2" in out and "passes (0 error(s), 1 warning(s), 0 info(s))" in out
    assert main(["check-netlist", str(path), "--strict"]) == 1
    assert "fails (0 error(s), 1 warning(s), 0 info(s); --strict)" in capsys.readouterr().out
    assert main(["check-netlist", str(path), "--min-severity", "error"]) == 0
    assert "general.2" not in capsys.readouterr().out.split("passes")[0]
    path.write_text(_severities_netlist(with_errors=True))
    assert main(["check-netlist", str(path), "--min-severity", "info"]) == 1
    out = capsys.readouterr().out
    assert "info: general.8" in out and "warning: general.2" in out and "error: intermed.popped_at_end" in out


def test_check_netlist_rules_lists_every_rule_with_its_enforcement(capsys) -> None:
    assert main(["check-netlist", "--rules"]) == 0
    out = capsys.readouterr().out
    for rule in ng.buda.RULES:
        line = next(line for line in out.splitlines() if line.startswith(rule.id + " "))
        assert rule.severity in line.split()[:2]
        assert rule.backend_ref and f"backend: {rule.backend_ref}" in out
        assert rule.enforcement and f"enforcement: {rule.enforcement}" in out
    assert main(["check-netlist"]) == 2


def test_debug_shows_the_traceback(kernels: Path, capsys) -> None:
    argv = ["--debug", "tile", f"{kernels}:matmul_tanh", "--shape", "a=256x256", "--shape", "b=128x512"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "TilingError" in err
    assert err.strip().splitlines()[-1].startswith("nkigym-graph tile: error: ")


def test_console_script_is_installed(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("nkigym-graph")
    done = subprocess.run([str(script), "transforms"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "operand_merge" in done.stdout


def test_search_emit_simulate_chain(program_file: Path, tmp_path: Path, capsys) -> None:
    best, kernel, netlist = tmp_path / "best.nkg", tmp_path / "kernel.py", tmp_path / "net.yaml"
    assert main(["search", str(program_file), "--budget", "20", "--no-progress", "-o", str(best)]) == 0
    assert "not measured" in capsys.readouterr().err
    assert main(["emit", str(best), "--backend", "nki", "-o", str(kernel)]) == 0
    assert "@nki.jit" in kernel.read_text()
    assert main(["simulate", str(kernel), "--program", str(best)]) == 0
    assert "(ok)" in capsys.readouterr().out
    assert main(["emit", str(best), "--backend", "buda", "--arch", "wormhole_b0", "-o", str(netlist)]) == 0
    assert main(["check-netlist", str(netlist)]) == 0


def test_search_stops_at_its_time_limit(program_file: Path, tmp_path: Path, capsys) -> None:
    best = tmp_path / "best.nkg"
    argv = ["search", str(program_file), "--seconds", "1e-9", "--no-progress", "-o", str(best)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "stopped by the time limit" in err and "best: " in err
    assert best.read_text()  # the best so far (the root here) is written


def test_simulate_reports_the_programs_target(kernels: Path, tmp_path: Path, capsys) -> None:
    program, kernel = tmp_path / "p.nkg", tmp_path / "kernel.py"
    shapes = ["--shape", "a=128x128", "--shape", "b=128x128"]
    assert main(["tile", f"{kernels}:matmul_tanh", *shapes, "--target", "trn1", "-o", str(program)]) == 0
    assert main(["emit", str(program), "-o", str(kernel)]) == 0
    capsys.readouterr()
    assert main(["simulate", str(kernel), "--program", str(program)]) == 0
    assert "; trn1: " in capsys.readouterr().out


def test_simulate_reports_a_mismatch(program_file: Path, tmp_path: Path, capsys) -> None:
    kernel = tmp_path / "kernel.py"
    assert main(["emit", str(program_file), "--backend", "nki", "-o", str(kernel)]) == 0
    other = tmp_path / "other.nkg"
    other.write_text(program_file.read_text().replace('op="tanh"', 'op="exp"'))
    assert main(["simulate", str(kernel), "--program", str(other)]) == 1
    assert "MISMATCH" in capsys.readouterr().out


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
def test_simulate_checks_a_narrow_dtype_program_as_search_does(
    kernels: Path, tmp_path: Path, capsys, dtype
) -> None:
    """A bf16 or fp16 program's kernel reads its inputs in that dtype and is compared with the
    tolerance of search's check: a correct kernel is ok, a different one still a mismatch."""
    program, kernel = tmp_path / "p.nkg", tmp_path / "kernel.py"
    shapes = ["--shape", "a=512x256", "--shape", "b=512x256", "--dtype", dtype]
    assert main(["tile", f"{kernels}:matmul_tanh", *shapes, "-o", str(program)]) == 0
    assert main(["emit", str(program), "-o", str(kernel)]) == 0
    capsys.readouterr()
    assert main(["simulate", str(kernel), "--program", str(program)]) == 0
    out = capsys.readouterr().out
    assert "(ok)" in out and "peak SBUF 512/" in out  # 2-byte input tiles: the dtype reached the kernel
    other = tmp_path / "other.nkg"
    other.write_text(program.read_text().replace('op="tanh"', 'op="sigmoid"'))
    assert main(["simulate", str(kernel), "--program", str(other)]) == 1
    assert "MISMATCH" in capsys.readouterr().out


TWO_OUTPUTS = """def two(a, b):
    out1 = nkigym.ndarray((128, 128), dtype=np.float32)
    out2 = nkigym.ndarray((128, 256), dtype=np.float32)
    tensor_0 = a[0:128, 0:128]
    tensor_1 = b[0:128, 0:256]
    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    tensor_3 = nkigym.activation(tensor_0, op="exp")
    out1[0:128, 0:128] = tensor_3
    out2[0:128, 0:256] = tensor_2
    return out1, out2
"""


def test_simulate_checks_every_output_of_a_program_returning_several(tmp_path: Path, capsys) -> None:
    program, kernel = tmp_path / "two.nkg", tmp_path / "kernel.py"
    ng.write_program(ng.parse_program(TWO_OUTPUTS), program)
    assert main(["emit", str(program), "-o", str(kernel)]) == 0
    capsys.readouterr()
    assert main(["simulate", str(kernel), "--program", str(program)]) == 0
    out = capsys.readouterr().out
    assert "outputs (128, 128) float32, (128, 256) float32" in out
    assert "output 0: max |simulated - interpreted|" in out and "output 1: max" in out
    other = tmp_path / "other.nkg"
    other.write_text(program.read_text().replace('op="exp"', 'op="tanh"'))
    assert main(["simulate", str(kernel), "--program", str(other)]) == 1
    assert "output 0: max |simulated - interpreted|" in capsys.readouterr().out


def _overflowing(x):
    return ng.activation(ng.tensor_scalar(x, 1000.0, op="multiply"), op="exp")


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # exp, and the cast to float32
def test_simulate_agrees_on_matching_infinities(tmp_path: Path, capsys) -> None:
    program, kernel = tmp_path / "p.nkg", tmp_path / "kernel.py"
    ng.write_program(ng.tile(_overflowing, {"x": (128, 128)}), program)
    assert main(["emit", str(program), "--backend", "nki", "-o", str(kernel)]) == 0
    assert main(["simulate", str(kernel), "--program", str(program)]) == 0
    assert "(ok)" in capsys.readouterr().out  # the same infs, position by position


@pytest.mark.filterwarnings("ignore:invalid value encountered in log")  # random inputs below 0
def test_search_no_confirm_returns_a_best_program_the_backend_cannot_emit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def row_max_of_log(x):  # type: ignore[no-untyped-def]
        return ng.tensor_reduce(ng.activation(x, op="log"), op="max")  # log of the padding: -inf

    path = tmp_path / "p.nkg"
    ng.write_program(ng.tile(row_max_of_log, {"x": (128, 150)}, target=ng.WORMHOLE_B0), path)
    assert main(["search", str(path), "--budget", "4", "--no-progress"]) == 2
    assert "cannot be confirmed as a Buda netlist" in capsys.readouterr().err
    argv = [
        "search",
        str(path),
        "--budget",
        "4",
        "--no-progress",
        "--no-confirm",
        "-o",
        str(tmp_path / "b.nkg"),
    ]
    assert main(argv) == 0
    assert read_program(tmp_path / "b.nkg").target.name == "wormhole_b0"
