"""The plugin-author kit: examples/plugin_template installs with pip, is listed by
``nkigym-graph plugins`` and used by ``saturate``, and its own test passes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TEMPLATE = Path(__file__).parents[2] / "examples" / "plugin_template"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, str]:
    target = tmp_path_factory.mktemp("site")
    source = tmp_path_factory.mktemp("template") / "plugin_template"
    shutil.copytree(TEMPLATE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), env.get("PYTHONPATH", "")]))
    return env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from nkigym_graph.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)


def test_listed_by_plugins_with_its_distribution(installed) -> None:
    done = _cli(installed, "plugins")
    assert done.returncode == 0
    line = next(row for row in done.stdout.splitlines() if row.startswith("relu_fold"))
    assert "nkigym_relu_fold.plugin" in line and "nkigym-relu-fold 0.1.0" in line


def test_used_by_saturate(installed, tmp_path: Path) -> None:
    kernels = tmp_path / "k.py"
    kernels.write_text(
        "import nkigym_graph as nkigym\n\n"
        "def f(a, b):\n"
        "    return nkigym.activation(nkigym.activation(nkigym.nc_matmul(a, b), op='relu'), op='relu')\n"
    )
    program, folded = tmp_path / "p.nkg", tmp_path / "f.nkg"
    assert (
        _cli(
            installed,
            "tile",
            f"{kernels}:f",
            "--shape",
            "a=128x128",
            "--shape",
            "b=128x128",
            "-o",
            str(program),
        ).returncode
        == 0
    )
    done = _cli(installed, "saturate", str(program), "--transforms", "relu_fold", "-o", str(folded))
    assert done.returncode == 0, done.stderr
    assert folded.read_text().count("nkigym.activation") == 1


def test_the_template_test_passes(installed) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(TEMPLATE / "tests")],
        env=installed,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
