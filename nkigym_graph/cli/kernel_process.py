"""Running a kernel file in a child process with CPU-time, memory and wall-time limits.

A kernel file is Python and ``simulate`` runs it with full builtins. The CLI's
``simulate`` and ``profile`` run it in a child process (``kernel_child``) limited by
``resource.setrlimit``: CPU seconds (``RLIMIT_CPU``) and address space (``RLIMIT_AS``),
plus a wall-clock timeout, so a kernel that loops, allocates without bound or exits
cannot take the caller down. Each way it can fail is a ``KernelProcessError`` saying
which limit (and its flag).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from nkigym_graph.errors import NkigymError

CPU_SECONDS = 60
"""Default CPU-time limit of the kernel's process (``--cpu-seconds``)."""
MEMORY_MB = 4096
"""Default address-space limit of the kernel's process in MiB (``--memory-mb``)."""


class KernelProcessError(NkigymError):
    """The kernel's process failed: a limit was hit, the kernel raised or exited early."""


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--cpu-seconds`` and ``--memory-mb`` flags of a command running a kernel file."""
    from nkigym_graph.cli.inputs import positive_int

    parser.add_argument(
        "--cpu-seconds",
        type=positive_int,
        default=CPU_SECONDS,
        help=f"CPU-time limit of the kernel's process (default {CPU_SECONDS})",
    )
    parser.add_argument(
        "--memory-mb",
        type=positive_int,
        default=MEMORY_MB,
        help=f"memory (address-space) limit of the kernel's process in MiB (default {MEMORY_MB})",
    )


class KernelRun(NamedTuple):
    """What the kernel returned (as float32 arrays), their dtypes and the simulator's report
    (the profile's summary for a ``profile`` job)."""

    outputs: list[np.ndarray]
    dtypes: list[str]
    report: str


def run_kernel(
    kernel: Path,
    inputs: Mapping[str, np.ndarray],
    cpu_seconds: int = CPU_SECONDS,
    memory_mb: int = MEMORY_MB,
    job: Mapping[str, Any] | None = None,
) -> KernelRun:
    """Simulate ``kernel`` on ``inputs`` in a limited child process.

    ``job`` says what the child does (see ``kernel_child``): ``{"mode": "simulate",
    "target": ..., "dtypes": [...]}`` (the default, on trn2), or ``{"mode": "profile", "dtypes": [...],
    "target": ..., "trace": path or None, "timeline": path or None}``.
    """
    wall = 2 * cpu_seconds + 30
    with tempfile.TemporaryDirectory(prefix="nkigym-kernel-") as tmp:
        workdir = Path(tmp)
        np.savez(workdir / "inputs.npz", *inputs.values())
        (workdir / "job.json").write_text(json.dumps(dict(job or {"mode": "simulate"})))
        command = [sys.executable, "-m", "nkigym_graph.cli.kernel_child", str(workdir), str(kernel.resolve())]
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        try:
            done = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=wall,
                env=env,
                preexec_fn=_limits(cpu_seconds, memory_mb),  # the CLI runs no threads
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise KernelProcessError(
                f"the kernel did not finish within {wall} s of wall time (it waits; --cpu-seconds sets both)"
            ) from None
        _relay(done.stdout)
        result = workdir / "result.json"
        if done.returncode != 0 or not result.is_file():
            raise KernelProcessError(_failure(done.returncode, done.stderr, cpu_seconds, memory_mb))
        record = json.loads(result.read_text())
        if "error" in record:
            hint = f" (limit {memory_mb} MiB: --memory-mb)" if record.get("kind") == "memory" else ""
            raise KernelProcessError(f"{kernel}: {record['error']}{hint}")
        outputs: list[np.ndarray] = []
        if (workdir / "outputs.npz").is_file():
            with np.load(workdir / "outputs.npz") as data:
                outputs = [data[f"arr_{i}"] for i in range(len(data.files))]
        return KernelRun(outputs, record["dtypes"], record["report"])


def _limits(cpu_seconds: int, memory_mb: int) -> Callable[[], None]:
    """Runs in the child before the kernel: lower its limits (never above the hard ones)."""

    def apply() -> None:
        import resource

        for kind, soft in ((resource.RLIMIT_CPU, cpu_seconds), (resource.RLIMIT_AS, memory_mb * 2**20)):
            hard = resource.getrlimit(kind)[1]
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            with contextlib.suppress(ValueError, OSError):  # no such limit here: the wall timeout remains
                resource.setrlimit(kind, (soft, hard))

    return apply


def _failure(code: int, stderr: str, cpu_seconds: int, memory_mb: int) -> str:
    import signal

    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"the kernel used more than {cpu_seconds} s of CPU time (--cpu-seconds)"
    last = next((line for line in reversed(stderr.splitlines()) if line.strip()), "")
    if "MemoryError" in last:
        return f"the kernel's process ran out of memory (limit {memory_mb} MiB: --memory-mb)"
    detail = f": {last[:200]}" if last else ""
    message = f"the kernel's process exited with code {code} before returning{detail}"
    # The child records whatever the kernel raises: a crash is most often the address-space limit.
    if code != 0:
        message += f"; it likely ran out of its --memory-mb limit ({memory_mb} MiB)"
    return message


def _relay(stdout: str) -> None:
    """The kernel's own prints, on stderr (stdout is the command's report)."""
    if stdout:
        sys.stderr.write(stdout if stdout.endswith("\n") else stdout + "\n")
