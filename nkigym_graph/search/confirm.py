"""Confirming a search's best program with what the backend makes of it.

On a NeuronCore target the best program's NKI kernel is timed by ``nki_sim.profile`` (the
second yardstick), and its outputs are compared with the program's interpretation on the
same random inputs. A Tenstorrent target has no simulator of timing: the best program is
emitted as a Buda netlist, checked with every rule (strict: no errors, no warnings) and
evaluated in numpy on random inputs against the program's interpretation
(:class:`NetlistConfirmation`). An NKI kernel that computes something else than the
program, or a netlist that breaks a rule, is a ``SearchError`` (a backend's bug), never a
result; a netlist's numeric difference is reported with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from nkigym_graph.ir.program import Program
from nkigym_graph.numeric.compare import errors, magnitude
from nkigym_graph.search.errors import SearchError

FORMAT_RTOL = {"Float32": 1e-5, "Float16": 2.0**-9, "Float16_b": 2.0**-6, "Bfp8_b": 2.0**-4}
"""How close a netlist's evaluation is to the program's, relative to the largest output, by
its data format: the evaluator stores every queue, op output and intermediate in it
(Float16_b: 8 significant bits, rounded a few times along a chain; Bfp8_b: 7 bits shared
by 16 values)."""


KERNEL_RTOL = {
    "float32": 1e-4,
    "float16": 2.0**-7,
    "bfloat16": 2.0**-4,
    "float8_e4m3": 0.25,
    "float8_e5m2": 0.25,
}
"""How close an NKI kernel's outputs are to the program's, relative to the largest output,
by the kernel's output dtype (its tiles round each result to it along a chain)."""


def kernel_tolerance(dtype: str, size: float) -> float:
    """How far an NKI kernel's output in ``dtype`` may be from the program's, for an output
    whose largest magnitude is ``size`` (``KERNEL_RTOL`` of it, at least of 1)."""
    return KERNEL_RTOL.get(dtype, 2.0**-4) * max(size, 1.0)


PROGRAM_RTOL = {dtype: KERNEL_RTOL[dtype] for dtype in ("float8_e4m3", "float8_e5m2")}
"""How close a netlist's evaluation is to the program's for program dtypes no Buda data
format holds: the netlist keeps an fp8 program's values in ``Float32``, while the
program's interpretation rounds its fp8 outputs (the difference is the program's rounding)."""
KERNEL_DTYPE_FOR = {"float64": "float32"}
"""Kernel dtypes for program dtypes NKI lacks (its computed tiles are fp32 then)."""


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


def _differences(program: Program, inputs: dict[str, np.ndarray], outputs: Any) -> list[tuple[float, float]]:
    """Per output, the largest error of ``outputs`` against ``program``'s interpretation
    of ``inputs``, and that output's magnitude."""
    from nkigym_graph.numeric.interpreter import interpret

    expected: Any = interpret(program, **inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    found = []
    for got, want in zip(outputs, expected, strict=False):
        want = np.asarray(want, dtype=np.float64)
        found.append(
            (float(errors(np.asarray(got, dtype=np.float64), want).max(initial=0.0)), magnitude(want))
        )
    return found


def confirm_with_netlist(program: Program, seed: int = 0) -> NetlistConfirmation:
    """Emit ``program`` as a Buda netlist for its target, check it strictly and compare its
    numpy evaluation with the program's on random inputs (``require_agreement`` refuses a
    netlist that breaks a rule)."""
    from nkigym_graph.buda import check_netlist
    from nkigym_graph.plugin.backends import backends, emit_artifact

    artifact = emit_artifact(program, backend="buda")
    violations = tuple(str(v) for v in check_netlist(artifact.parsed, program.target, strict=True))
    inputs = _inputs(program, seed)
    got = backends()["buda"].run(artifact, inputs)
    names = program.returns or tuple(sorted(got))
    differences = _differences(program, inputs, [got[name] for name in names])
    worst = max((error for error, _ in differences), default=0.0)
    scale = max((size for _, size in differences), default=0.0)
    formats = {queue.get("df") for queue in artifact.parsed["queues"].values()}
    # the program rounds its outputs to their dtypes (its inputs hold their dtypes exactly)
    rounded = {program.variables[name].dtype for name in program.returns} | {program.output_dtype}
    rtol = max(
        max(FORMAT_RTOL.get(str(df), 1e-5) for df in formats),
        max((PROGRAM_RTOL.get(str(d), 0.0) for d in rounded), default=0.0),
    )
    return NetlistConfirmation(
        str(artifact.facts["arch"]),
        int(artifact.facts["ops"]),
        int(artifact.facts["fused_ops"]),
        violations,
        worst,
        rtol * max(scale, 1.0),
    )


def require_agreement(confirmation: NetlistConfirmation) -> NetlistConfirmation:
    """``confirmation``, if the netlist checks clean; else a ``SearchError`` saying which
    rules it breaks. A numeric difference is reported (``ok``, ``str``), not raised: the
    tolerance is one share of the largest output per data format, which long Float16_b
    accumulations and functions that magnify rounding (``exp``, ``tanh``) can exceed, and
    Buda's ``reciprocal(0)`` is finite where the program's is ``inf``."""
    if confirmation.violations:
        raise SearchError(
            f"the best program's {confirmation}; this is a bug of the buda backend "
            "(search(..., confirm=False) skips this check)"
        )
    return confirmation


def _within_rounding(
    program: Program, inputs: dict[str, np.ndarray], outputs: Any, index: int, dtype: str, tolerance: float
) -> bool:
    """Whether kernel output ``index`` is within ``tolerance`` of the exact (float64)
    result beyond the error of the program run with every result rounded to the kernel's
    ``dtype`` (as its tiles hold them): a function that magnifies rounding (``exp`` of a
    bf16 tile) can put a correct kernel further from the program's float64 interpretation
    than the dtype's tolerance. Never where that rounded run overflows or the exact result
    is not finite (no bound then)."""
    from nkigym_graph.nki_sim.dtypes import to_dtype
    from nkigym_graph.numeric.interpreter import run

    storage = to_dtype(dtype)
    if storage is None:
        return False
    name = program.returns[index]
    exact = run(program, inputs, np.float64)[name]
    rounded = run(program, inputs, np.float64, round_to=storage)[name]
    if not (np.isfinite(exact).all() and np.isfinite(rounded).all()):
        return False
    rounding = float(np.abs(rounded - exact).max(initial=0.0))
    kernel = float(errors(np.asarray(outputs[index], dtype=np.float64), exact).max(initial=0.0))
    return kernel <= rounding + tolerance


def confirm_with_profile(program: Program, seed: int = 0) -> Any:
    """The profile (``nki_sim.profile``) of ``program``'s NKI kernel on random inputs, its
    outputs checked against the program's interpretation of the same inputs (a program
    in a dtype NKI lacks is emitted in fp32; ``KERNEL_DTYPE_FOR``). An output further off
    than its dtype's tolerance passes if it is within that tolerance of the exact result
    beyond the error of the program with its results rounded as the kernel's tiles round
    them (all finite)."""
    from nkigym_graph.nki_sim import profile
    from nkigym_graph.nki_sim.dtypes import to_dtype
    from nkigym_graph.plugin.backends import emit

    declared = (program.variables[name].dtype for name in program.returns)
    dtypes = {p.dtype for p in program.params} | {d for d in declared if d}
    kernel_dtype = next((KERNEL_DTYPE_FOR[d] for d in sorted(dtypes) if d in KERNEL_DTYPE_FOR), None)
    options = {} if kernel_dtype is None else {"dtype": kernel_dtype}
    held = _inputs(program, seed)
    arrays = [held[p.name].astype(to_dtype(kernel_dtype or p.dtype) or np.float32) for p in program.params]
    found = profile(emit(program, backend="nki", **options), *arrays, target=program.target)
    given = {p.name: a.astype(np.float64) for p, a in zip(program.params, arrays, strict=True)}
    outputs = found.outputs if isinstance(found.outputs, tuple) else (found.outputs,)
    dtype = kernel_dtype or program.output_dtype
    for index, (worst, size) in enumerate(_differences(program, given, outputs)):
        tolerance = kernel_tolerance(dtype, size)
        if worst > tolerance and not _within_rounding(program, given, outputs, index, dtype, tolerance):
            raise SearchError(
                f"the best program's NKI kernel computes something else than the program: output "
                f"{index} differs by up to {worst:.3g} (tolerance {tolerance:.3g} for {dtype}) on random "
                "inputs; this is a bug of the nki backend (search(..., confirm=False) skips this check)"
            )
    return found
