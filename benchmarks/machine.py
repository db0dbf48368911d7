"""Machine notes and result files shared by the benchmark scripts."""

from __future__ import annotations

import datetime
import os
import platform
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results"


def machine_notes() -> str:
    """CPU, cores, memory, Python and numpy versions, date."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"Machine: {cpu}, {os.cpu_count()} cores, {mem:.0f} GiB, load average "
        f"{os.getloadavg()[0]:.2f} (shared with other work while measuring); "
        f"Python {platform.python_version()}, numpy {np.__version__}; "
        f"{datetime.date.today().isoformat()}."
    )


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def in_subprocess(script: Path, *args: str) -> str:
    """Run ``script`` with ``args`` in a fresh interpreter (so peak memory is per case)."""
    done = subprocess.run([sys.executable, str(script), *args], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def write_results(name: str, title: str, table: str, notes: str = "") -> Path:
    """Write ``benchmarks/results/NAME.md`` and echo it."""
    RESULTS.mkdir(exist_ok=True)
    text = f"# {title}\n\n{machine_notes()}\n\n{table}\n"
    if notes:
        text += f"\n{notes}\n"
    path = RESULTS / f"{name}.md"
    path.write_text(text)
    print(text)
    return path
