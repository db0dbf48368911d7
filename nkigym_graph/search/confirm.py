"""Confirming a search's best program with what the backend makes of it.

On a NeuronCore target the best program's NKI kernel is timed by ``nki_sim.profile`` (the
second yardstick), and its outputs are compared with the program's exact result on the
same random inputs element by element, each within what rounding allows at that element
(``kernel_tolerance``, ``kernel_agreement``; ``simulate --program`` compares alike). A
Tenstorrent target has no simulator of timing: the best program is emitted as a Buda
netlist, checked with every rule (strict: no errors, no warnings) and evaluated in numpy
on random inputs against the program's interpretation (:class:`NetlistConfirmation`). An
NKI kernel that computes something else than the program, or a netlist that breaks a rule,
is a ``SearchError`` (a backend's bug), never a result; a netlist's numeric difference is
reported with it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from nkigym_graph.ir.program import Program
from nkigym_graph.numeric.compare import errors, magnitude
from nkigym_graph.numeric.rounding_bound import float_limits, rounding_bound
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
"""How far an element of an NKI kernel's output may be from the program's exact one relative
to that element (in the subnormal range: to the smallest normal number), by the kernel's
output dtype, beyond the rounding the kernel's arithmetic allows there (``kernel_tolerance``)."""

ENGINE_ROUNDING = 2.0**-20
"""The relative rounding allowed each float32 computation of an NKI kernel's engines, of the
magnitude it computes at (a matmul's: the sum of its terms' magnitudes): 16 units of
float32's, for function approximations and the order of an accumulation."""


def kernel_tolerance(dtype: str, exact: np.ndarray, bound: np.ndarray, rounded: np.ndarray) -> np.ndarray:
    """How far each element of an NKI kernel's output in ``dtype`` may be from ``exact``, the
    program's exact (float64) result: ``KERNEL_RTOL`` of the element (at least of ``dtype``'s
    smallest normal number), plus ``bound``, a first-order bound of the rounding the kernel's
    engines and ``dtype`` tiles can add there (``rounding_bound``), plus the error there of
    ``rounded``, the program run with its results rounded to ``dtype`` (where finite: it
    covers what a first-order bound misses, an fp8 rounding that ``exp`` magnifies). 0 where
    ``exact`` is not finite (the kernel must hold the same value there)."""
    storage = _float_storage(dtype)
    tiny = float_limits(storage)[1] if storage is not None else 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        drift = np.abs(rounded - exact)
        share = KERNEL_RTOL.get(dtype, 2.0**-4) * np.maximum(np.abs(exact), tiny)
    tolerance = share + bound + np.where(np.isfinite(drift), drift, 0.0)
    return np.where(np.isfinite(exact), tolerance, 0.0)


def kernel_agreement(
    got: np.ndarray, exact: np.ndarray, rounded: np.ndarray, tolerance: np.ndarray, dtype: str
) -> np.ndarray:
    """Per element, whether an NKI kernel's output ``got`` in ``dtype`` agrees with the
    program: finite and within ``tolerance`` of ``exact``; the same infinity or nan as
    ``exact`` or as ``rounded`` (the program run with its results rounded to ``dtype``, which
    overflows where the kernel's tiles do); or an infinity where ``exact`` is within
    ``tolerance`` of ``dtype``'s largest finite value on that side (a rounding may pass it)."""
    got = np.asarray(got, dtype=np.float64)
    storage = _float_storage(dtype)
    largest = float_limits(storage)[2] if storage is not None else np.inf
    with np.errstate(invalid="ignore", over="ignore"):
        within = np.isfinite(got) & np.isfinite(exact) & (np.abs(got - exact) <= tolerance)
        beyond = np.isinf(got) & np.isfinite(exact) & (np.sign(got) * exact + tolerance >= largest)
    return within | beyond | _same_non_finite(got, exact) | _same_non_finite(got, rounded)


def _same_non_finite(got: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Per element, whether ``got`` is the infinity (same sign) or the nan ``reference`` is."""
    return (np.isinf(got) & (got == reference)) | (np.isnan(got) & np.isnan(reference))


def _float_storage(dtype: str) -> np.dtype[Any] | None:
    """The storage of an NKI float dtype (None for another)."""
    from nkigym_graph.nki_sim.dtypes import is_float, to_dtype

    storage = to_dtype(dtype)
    return storage if storage is not None and is_float(storage) else None


@dataclass(frozen=True)
class KernelReference:
    """What the outputs of ``program``'s NKI kernel in ``dtype`` on ``inputs`` are checked
    against, per returned output: the exact (float64) result, a first-order bound of the
    rounding a kernel adds to it (``rounding_bound``), and (computed when first needed) the
    program run with its results rounded to ``dtype``."""

    program: Program
    inputs: dict[str, np.ndarray]
    dtype: str
    exact: tuple[np.ndarray, ...]
    bound: tuple[np.ndarray, ...]

    @functools.cached_property
    def rounded(self) -> tuple[np.ndarray, ...]:
        """The program's outputs with every result rounded to ``dtype`` as the kernel's tiles
        hold them (``interpreter.run(round_to=...)``; the exact ones for a dtype that is no
        NKI float)."""
        from nkigym_graph.numeric.blas import one_blas_thread
        from nkigym_graph.numeric.interpreter import run

        storage = _float_storage(self.dtype)
        if storage is None:
            return self.exact
        with one_blas_thread(), np.errstate(all="ignore"):
            found = run(self.program, self.inputs, np.float64, round_to=storage, keep=self.program.returns)
        return tuple(found[name] for name in self.program.returns)


def kernel_reference(program: Program, inputs: dict[str, np.ndarray], dtype: str) -> KernelReference:
    """The reference for ``program``'s kernel in ``dtype`` on ``inputs`` (the values the
    kernel reads, which its dtype holds exactly)."""
    exact, bound = rounding_bound(program, inputs, _float_storage(dtype), ENGINE_ROUNDING)
    names = program.returns
    return KernelReference(
        program, inputs, dtype, tuple(exact[name] for name in names), tuple(bound[name] for name in names)
    )


@dataclass(frozen=True)
class OutputCheck:
    """How output ``index`` of an NKI kernel compares with the program's, element by element:
    how many of its elements disagree, the largest difference where both are finite, and
    the element furthest beyond its tolerance."""

    index: int
    elements: int
    wrong: int
    largest_error: float
    worst: str

    @property
    def ok(self) -> bool:
        return self.wrong == 0

    def __str__(self) -> str:
        if self.ok:
            return f"output {self.index} agrees at all {self.elements} elements"
        return f"output {self.index} disagrees at {self.wrong} of {self.elements} elements ({self.worst})"


def check_output(index: int, got: Any, reference: KernelReference) -> OutputCheck:
    """Compare a kernel's output ``index`` with ``reference`` (``kernel_agreement``). The
    program run with rounded results can only excuse more elements: it is run only when
    some element disagrees without it."""
    got = np.asarray(got, dtype=np.float64)
    exact, bound, dtype = reference.exact[index], reference.bound[index], reference.dtype
    tolerance = kernel_tolerance(dtype, exact, bound, exact)
    agree = kernel_agreement(got, exact, exact, tolerance, dtype)
    if not agree.all():
        rounded = reference.rounded[index]
        tolerance = kernel_tolerance(dtype, exact, bound, rounded)
        agree = kernel_agreement(got, exact, rounded, tolerance, dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        difference = np.abs(got - exact)
    largest = float(np.where(np.isfinite(difference), difference, 0.0).max(initial=0.0))
    worst = "" if agree.all() else _worst(got, exact, tolerance, agree, dtype)
    return OutputCheck(index, int(exact.size), int((~agree).sum()), largest, worst)


def _worst(got: np.ndarray, exact: np.ndarray, tolerance: np.ndarray, agree: np.ndarray, dtype: str) -> str:
    """The disagreeing element furthest beyond its tolerance, described."""
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = np.where(agree, -1.0, np.nan_to_num(errors(got, exact) / tolerance, nan=np.inf))
    at = np.unravel_index(int(np.argmax(excess)), exact.shape)
    return (
        f"at {tuple(int(i) for i in at)}: kernel {got[at]:.6g}, exact {exact[at]:.6g}, "
        f"tolerance {tolerance[at]:.3g} for {dtype}"
    )


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


def confirm_with_profile(program: Program, seed: int = 0) -> Any:
    """The profile (``nki_sim.profile``) of ``program``'s NKI kernel on random inputs, its
    outputs checked element by element against the program's exact result on the same
    inputs (``check_output``; a program in a dtype NKI lacks is emitted in fp32:
    ``KERNEL_DTYPE_FOR``)."""
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
    reference = kernel_reference(program, given, kernel_dtype or program.output_dtype)
    for index, got in enumerate(outputs[: len(reference.exact)]):
        check = check_output(index, got, reference)
        if not check.ok:
            raise SearchError(
                f"the best program's NKI kernel computes something else than the program: {check} on "
                "random inputs; this is a bug of the nki backend (search(..., confirm=False) skips this "
                "check)"
            )
    return found
