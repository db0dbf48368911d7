"""Small conveniences: ``python -m nkigym_graph``, ``--version``, ``ops``, help texts,
progress lines in logs, a readable cost line, one kind of transform argument."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import nkigym_graph as ng
from nkigym_graph.cli import main
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.search.progress import Progress


def test_python_dash_m_is_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "nkigym_graph", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert done.stdout.strip() == f"nkigym-graph {ng.__version__}"
    bad = subprocess.run(
        [sys.executable, "-m", "nkigym_graph", "tile"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_tile_help_lists_the_dtypes(capsys) -> None:
    assert main(["tile", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "float32, bfloat16, float16, float64, float8_e4m3, float8_e5m2" in text
    assert "bf16=bfloat16" in text and "--max-statements" in text


def test_tile_help_offers_the_online_form(capsys) -> None:
    assert main(["tile", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "--online compute a row maximum and the sums of the exponentials it shifts (softmax, "
        "attention) in one pass over the row: a running maximum, rescaled sums (tile(..., online=True))"
    ) in text


def test_dot_fold_help_gives_both_conditions_of_auto(capsys) -> None:
    """The help named only the statement count; ``auto`` also folds a picture too wide to read."""
    from nkigym_graph.dot.folding import AUTO_FOLD_ABOVE, AUTO_FOLD_WIDER_THAN

    assert main(["dot", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--fold auto|tile|op|none" in text
    assert (
        f"(default auto: by output tile above {AUTO_FOLD_ABOVE} statements or with more than "
        f"{AUTO_FOLD_WIDER_THAN} side by side)"
    ) in text


def test_help_texts_show_the_real_defaults_and_strategies(capsys) -> None:
    from nkigym_graph.plugin.transforms import DEFAULT_PIPELINE
    from nkigym_graph.search import STRATEGIES

    assert main(["saturate", "--help"]) == 0
    text = "".join(capsys.readouterr().out.split())
    assert f"(default:{','.join(DEFAULT_PIPELINE)})" in text
    assert main(["search", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert all(name in text for name in STRATEGIES) and "schedule" in text
    assert "greedy (default)" in text


def test_ops_lists_ops_and_activation_functions(capsys) -> None:
    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    assert (
        'nkigym.activation(x, op="tanh", scale=1.0, bias=0.0)' in out and "nkigym.nc_matmul(lhs, rhs)" in out
    )
    assert "activation op=: abs, copy, exp, gelu, log, negative, reciprocal, relu" in out
    assert "tensor_reduce op=: max, mean, min, sum" in out


def test_progress_in_a_log_is_plain_lines() -> None:
    log = io.StringIO()
    shown = Progress("search", True, log)
    shown.update(3, 1, 2e-6, force=True)
    shown.update(4, 1, 2e-6, force=True)
    shown.close()
    assert "\r" not in log.getvalue()
    assert log.getvalue().count("\n") == 2 and "4 states (1 duplicates)" in log.getvalue()


def test_the_cost_line_names_the_target_once() -> None:
    text = str(ng.estimate(tiled_matmul(256, 256, 256)))
    assert text.startswith("trn2, modeled (analytic cost model), not measured:")
    assert "trn2 on trn2" not in text


def test_search_saturate_keep_parameter_dtypes(tmp_path: Path) -> None:
    source = ng.tile(lambda a, b: ng.nc_matmul(a, b), {"a": (256, 128), "b": (256, 256)}, dtype="bf16")
    path = ng.write_program(source, tmp_path / "p.nkg")
    for command in (["saturate"], ["search", "--budget", "5", "--no-progress"]):
        out = tmp_path / f"{command[0]}.nkg"
        assert main([command[0], str(path), *command[1:], "-o", str(out)]) == 0
        assert {p.dtype for p in ng.read_program(out).params} == {"bfloat16"}


def test_matches_of_and_analyze_take_a_name_or_a_transform() -> None:
    program = tiled_matmul(256, 128, 256)
    reuse = ng.get_transform("data_reuse")
    by_name, by_object = ng.matches_of(program, "data_reuse"), ng.matches_of(program, reuse)
    assert list(by_name) == list(by_object) == ng.analyze(program, "data_reuse") == ng.analyze(program, reuse)
