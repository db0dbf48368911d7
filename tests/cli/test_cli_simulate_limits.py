"""``nkigym-graph simulate`` and ``profile`` run the kernel in a limited child process: a
kernel that loops, allocates without bound, exits or raises is a named error, and the
caller lives on."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from nkigym_graph.cli import main
from nkigym_graph.cli.kernel_process import KernelProcessError, run_kernel

HEADER = "import sys\nimport numpy as np\nimport nki\nimport nki.language as nl\n\n\n@nki.jit\n"


def _kernel(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "kernel.py"
    path.write_text(f"{HEADER}def kernel(a):\n{body}\n")
    return path


COMMANDS = pytest.mark.parametrize("command", ["simulate", "profile"])


def _run(kernel: Path, *limits: str, command: str = "simulate") -> list[str]:
    return [command, str(kernel), "--shape", "a=128x128", *limits]


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@COMMANDS
def test_an_endless_kernel_hits_the_cpu_limit(tmp_path: Path, capsys, command: str) -> None:
    kernel = _kernel(tmp_path, "    while True:\n        pass")
    assert main(_run(kernel, "--cpu-seconds", "1", command=command)) == 2
    assert "the kernel used more than 1 s of CPU time (--cpu-seconds)" in _one_line(capsys)


@COMMANDS
def test_a_huge_allocation_hits_the_memory_limit(tmp_path: Path, capsys, command: str) -> None:
    kernel = _kernel(tmp_path, "    block = np.ones((16_384, 16_384))  # 2 GiB\n    return block")
    assert main(_run(kernel, "--memory-mb", "1024", command=command)) == 2
    assert "ran out of memory (limit 1024 MiB: --memory-mb)" in _one_line(capsys)


@COMMANDS
def test_a_process_too_small_to_start_names_the_memory_limit(tmp_path: Path, capsys, command: str) -> None:
    kernel = _kernel(tmp_path, "    return a")
    assert main(_run(kernel, "--memory-mb", "10", command=command)) == 2  # Python itself needs more
    line = _one_line(capsys)
    assert "exited with code" in line and "likely ran out of its --memory-mb limit (10 MiB)" in line


@COMMANDS
def test_sys_exit_in_a_kernel_is_not_success(tmp_path: Path, capsys, command: str) -> None:
    kernel = _kernel(tmp_path, "    sys.exit(0)")
    assert main(_run(kernel, command=command)) == 2
    assert re.search(r"sys\.exit\(0\)|SystemExit\(0\)", _one_line(capsys))  # the simulator may name it first


@COMMANDS
def test_a_kernel_that_kills_its_process(tmp_path: Path, capsys, command: str) -> None:
    kernel = _kernel(tmp_path, "    import os\n    os._exit(0)")
    assert main(_run(kernel, command=command)) == 2
    assert "the kernel's process exited with code 0 before returning" in _one_line(capsys)


@COMMANDS
def test_a_kernel_that_raises(tmp_path: Path, capsys, command: str) -> None:
    kernel = _kernel(tmp_path, "    raise ValueError('bad kernel')")
    assert main(_run(kernel, command=command)) == 2
    assert "ValueError: bad kernel" in _one_line(capsys)


def test_the_kernel_prints_go_to_stderr_and_its_outputs_come_back(tmp_path: Path) -> None:
    kernel = _kernel(
        tmp_path,
        "    print('hello from the kernel')\n"
        "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
        "    nl.store(out, nl.exp(nl.load(a)))\n"
        "    return out",
    )
    a = np.linspace(-1, 1, 128 * 128, dtype=np.float32).reshape(128, 128)
    run = run_kernel(kernel, {"a": a})
    assert run.dtypes == ["float32"]
    np.testing.assert_allclose(run.outputs[0], np.exp(a), rtol=1e-5)


def test_run_kernel_raises_the_named_error(tmp_path: Path) -> None:
    with pytest.raises(KernelProcessError, match=r"sys\.exit\(3\)|SystemExit\(3\)"):
        run_kernel(_kernel(tmp_path, "    sys.exit(3)"), {"a": np.zeros((128, 128), np.float32)})
