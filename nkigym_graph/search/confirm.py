"""Confirming a search's best program with what the backend makes of it.

On a NeuronCore target the best program's NKI kernel is timed by ``nki_sim.profile`` (the
second yardstick). A Tenstorrent target has no simulator of timing: the best program is
emitted as a Buda netlist, checked with every rule (strict: no errors, no warnings) and
evaluated in numpy on random inputs against the program's interpretation
(:class:`NetlistConfirmation`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from nkigym_graph.ir.program import Program
from nkigym_graph.numeric.compare import errors, magnitude

FORMAT_RTOL = {"Float32": 1e-5, "Float16": 2.0**-9, "Float16_b": 2.0**-6, "Bfp8_b": 2.0**-4}
"""How close a netlist's evaluation is to the program's, relative to the largest output, by
its data format: the evaluator stores every queue, op output and intermediate in it
(Float16_b: 8 significant bits, rounded a few times along a chain; Bfp8_b: 7 bits shared
by 16 values)."""


@dataclass(frozen=True)
class NetlistConfirmation:
    """The best program's netlist: its architecture, the rules it breaks (strict reading),
    the largest difference of its evaluation from the program's, and whether they agree."""

    arch: str
    ops: int
    fused_ops: int
    violations: tuple[str, ...]
    max_error: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return not self.violations and self.max_error <= self.tolerance

    def __str__(self) -> str:
        checked = "checks clean" if not self.violations else f"breaks {len(self.violations)} rule(s)"
        agrees = "evaluates equal" if self.max_error <= self.tolerance else "evaluates DIFFERENT"
        return (
            f"netlist for {self.arch} ({self.ops} op(s), {self.fused_ops} fused) {checked} (strict) and "
            f"{agrees} to the program (max |error| {self.max_error:.2e}, tolerance {self.tolerance:.2e})"
        )


def _inputs(program: Program, seed: int) -> dict[str, np.ndarray]:
    """Random inputs each parameter's dtype holds exactly (what the program is given)."""
    rng = np.random.default_rng(seed)
    return {
        p.name: rng.standard_normal(tuple(p.shape)).astype(p.dtype).astype(np.float64) for p in program.params
    }


def confirm_with_netlist(program: Program, seed: int = 0) -> NetlistConfirmation:
    """Emit ``program`` as a Buda netlist for its target, check it strictly and compare its
    numpy evaluation with the program's on random inputs."""
    from nkigym_graph.buda import check_netlist
    from nkigym_graph.numeric.interpreter import interpret
    from nkigym_graph.plugin.backends import backends, emit_artifact

    artifact = emit_artifact(program, backend="buda")
    violations = tuple(str(v) for v in check_netlist(artifact.parsed, program.target, strict=True))
    inputs = _inputs(program, seed)
    got = backends()["buda"].run(artifact, inputs)
    expected: Any = interpret(program, **inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    names = program.returns or tuple(sorted(got))
    worst, scale = 0.0, 0.0
    for name, want in zip(names, expected, strict=False):
        want = np.asarray(want, dtype=np.float64)
        worst = max(worst, float(errors(np.asarray(got[name], dtype=np.float64), want).max(initial=0.0)))
        scale = max(scale, magnitude(want))
    formats = {queue.get("df") for queue in artifact.parsed["queues"].values()}
    rtol = max(FORMAT_RTOL.get(str(df), 1e-5) for df in formats)
    return NetlistConfirmation(
        str(artifact.facts["arch"]),
        int(artifact.facts["ops"]),
        int(artifact.facts["fused_ops"]),
        violations,
        worst,
        rtol * max(scale, 1.0),
    )
