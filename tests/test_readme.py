"""Every code block of the README runs.

``python`` blocks run in order in one namespace (as a reader would paste them);
``bash`` blocks run line by line in a scratch folder holding a copy of ``examples/``.
The two fresh-machine commands (a ``console`` block: ``./run main``, ``./run tests``) are
what CI and the main-job test run; ``text`` blocks are output shown to the reader and are
compared with what the code prints where the README says so.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nkigym_graph
from nkigym_graph.plugin.manager import get_plugin_manager

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", README, re.S)


def test_the_readme_starts_with_the_two_fresh_machine_commands() -> None:
    kind, first = BLOCKS[0]
    assert kind == "console"
    commands = [line.split("#")[0].strip() for line in first.strip().splitlines()]
    assert commands == ["./run main", "./run tests"]
    assert "./run tests" in (ROOT / ".ci" / "run").read_text()


def test_python_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme"}
    printed = io.StringIO()
    before = {plugin for _, plugin in get_plugin_manager().list_name_plugin()}
    try:
        for kind, code in BLOCKS:
            if kind == "python":
                with contextlib.redirect_stdout(printed):
                    exec(compile(code, "README.md", "exec"), namespace)
    finally:  # the plugins the README registers (DropCopies, ...) leave with it
        for _, plugin in get_plugin_manager().list_name_plugin():
            if plugin not in before:
                nkigym_graph.unregister_plugin(plugin)
    shown = next(code for kind, code in BLOCKS if kind == "text")
    assert shown.strip() in printed.getvalue()  # the program text the tour shows is real
    assert "9 -> 5 statements" in printed.getvalue()


def test_bash_blocks_run(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for kind, code in BLOCKS:
        if kind != "bash":
            continue
        for line in code.strip().splitlines():
            done = subprocess.run(shlex.split(line), cwd=tmp_path, env=env, capture_output=True, text=True)
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
