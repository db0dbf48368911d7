"""The child side of ``nkigym-graph simulate`` and ``profile``: run one kernel file, write
what it returned.

``python -m nkigym_graph.cli.kernel_child WORKDIR KERNEL.py`` reads ``inputs.npz`` and
``job.json`` from WORKDIR. A ``simulate`` job simulates the kernel on the inputs (cast
to the job's ``dtypes``, one per input, if it has them), on the job's ``target`` (default
trn2), and writes ``outputs.npz`` (as float32) and
``result.json`` (the report, the outputs' dtypes, or the error); a ``profile`` job casts
each input to its dtype in the job's ``dtypes``, profiles the kernel on ``target``, writes the
``trace`` and ``timeline`` files asked for and records the profile's summary as the
report. Everything the kernel raises, including ``SystemExit``, is recorded, never
passed on; the parent (``kernel_process``) sets the resource limits and reads the result.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np


def run(workdir: Path, kernel: Path) -> dict[str, Any]:
    """Simulate ``kernel`` on ``workdir/inputs.npz``; the record for ``result.json``."""
    from nkigym_graph.foreign_errors import describe
    from nkigym_graph.nki_sim import simulate

    try:
        with np.load(workdir / "inputs.npz") as data:
            inputs = [data[f"arr_{i}"] for i in range(len(data.files))]
        job = json.loads((workdir / "job.json").read_text())
        if job["mode"] == "profile":
            return _profile(kernel, inputs, job)
        if job.get("dtypes"):  # each input in the dtype its parameter has
            from nkigym_graph.nki_sim.dtypes import to_dtype

            inputs = [a.astype(to_dtype(d) or a.dtype) for a, d in zip(inputs, job["dtypes"], strict=True)]
        outputs, report = simulate(kernel.read_text(), *inputs, target=job.get("target", "trn2"), report=True)
        arrays = list(outputs) if isinstance(outputs, tuple | list) else [outputs]
        if not arrays or not all(isinstance(a, np.ndarray) for a in arrays):
            return {"error": f"the kernel returned {describe_value(outputs)}, not arrays", "kind": "output"}
        np.savez(workdir / "outputs.npz", *[np.asarray(a, dtype=np.float32) for a in arrays])
        return {"dtypes": [a.dtype.name for a in arrays], "report": str(report)}
    except MemoryError:
        return {"error": "the kernel ran out of memory", "kind": "memory"}
    except SystemExit as err:
        return {"error": f"the kernel called sys.exit({err.code!r})", "kind": "exit"}
    except BaseException as err:  # the kernel is arbitrary Python: record whatever it raised
        if _caused_by(err, MemoryError) or "MemoryError" in str(err):
            return {"error": "the kernel ran out of memory", "kind": "memory"}
        return {"error": describe(err), "kind": "error"}


def _profile(kernel: Path, inputs: list[np.ndarray], job: dict[str, Any]) -> dict[str, Any]:
    from nkigym_graph.nki_sim import profile
    from nkigym_graph.nki_sim.dtypes import to_dtype

    dtypes = [to_dtype(name) for name in job["dtypes"]]
    prof = profile(
        kernel.read_text(), *[a.astype(d) for a, d in zip(inputs, dtypes, strict=True)], target=job["target"]
    )
    lines = [prof.summary()]
    if job.get("trace"):
        lines.append(f"trace: {prof.write_trace(job['trace'])} (open in ui.perfetto.dev or chrome://tracing)")
    if job.get("timeline"):
        lines.append(f"timeline: {prof.write_timeline(job['timeline'])}")
    return {"dtypes": [], "report": "\n".join(lines)}


def _caused_by(err: BaseException | None, kind: type[BaseException]) -> bool:
    seen = 0
    while err is not None and seen < 50:
        if isinstance(err, kind):
            return True
        err, seen = err.__cause__ or err.__context__, seen + 1
    return False


def describe_value(value: object) -> str:
    """``int 3``: a short description of an unexpected value."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def main(argv: list[str]) -> int:
    """Entry point: ``WORKDIR KERNEL.py``."""
    workdir, kernel = Path(argv[0]), Path(argv[1])
    record = run(workdir, kernel)
    (workdir / "result.json").write_text(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
