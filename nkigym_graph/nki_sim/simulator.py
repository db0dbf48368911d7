"""Running a kernel: :class:`Simulator` and :func:`simulate`.

Array arguments become shared-HBM tensors over the caller's arrays (used in place, as
on the device: a kernel that writes an argument writes the array). Other arguments
(ints, tuples, keyword meta-parameters) pass through. Returned HBM tensors come back as
numpy arrays in their NKI dtype (``ml_dtypes.bfloat16`` for bf16); a tuple or list of
them as a tuple. After the kernel returns, the live ranges of its SBUF and PSUM tiles
are checked against the target's capacity.

The kernel is Python run in this process with full builtins; a run is bounded in NKI
instructions and wall time, and a kernel's ``sys.exit`` is an error
(:mod:`nkigym_graph.nki_sim.limits`).
"""

from __future__ import annotations

import contextlib
import dis
import inspect
import linecache
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from nkigym_graph.ir.targets import Target
from nkigym_graph.nki_sim.alloc import capacity, wrap_input
from nkigym_graph.nki_sim.buffers import PSUM, SBUF
from nkigym_graph.nki_sim.dtypes import to_dtype
from nkigym_graph.nki_sim.errors import NKISimulationError
from nkigym_graph.nki_sim.limits import (
    DEFAULT_MAX_INSTRUCTIONS,
    DEFAULT_TIMEOUT,
    check_arguments,
    check_limits,
    contained,
)
from nkigym_graph.nki_sim.loader import KernelSource, instantiate, load_source
from nkigym_graph.nki_sim.memory import peak_usage
from nkigym_graph.nki_sim.modules import build_modules
from nkigym_graph.nki_sim.report import SimulationReport
from nkigym_graph.nki_sim.state import RunState, activate, deactivate, traceback_line
from nkigym_graph.nki_sim.tensor import Tensor
from nkigym_graph.nki_sim.timing.run import profile_of, timing_recorder
from nkigym_graph.plugin.registry import get_target


def _single_threaded_blas() -> contextlib.AbstractContextManager[Any]:
    """One BLAS thread while a kernel runs: its many small GEMMs (128 x 128 x 512) gain
    nothing from threads and lose a lot on a busy machine. Needs ``threadpoolctl``;
    without it BLAS keeps its own setting."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _python_error(exc: Exception, source: KernelSource, rule: str | None = None) -> Exception:
    line = traceback_line(exc.__traceback__, source.filename)
    if isinstance(exc, AssertionError):
        text = str(exc) or "assert failed"
        return NKISimulationError(rule or "kernel.assert", f"kernel assertion: {text}", "kernel", line)
    return NKISimulationError(rule or "kernel.exception", f"{type(exc).__name__}: {exc}", "kernel", line)


def _wrap(value: Any, name: str, copies: list[tuple[Any, Any]]) -> Any:
    if not isinstance(value, np.ndarray) or value.ndim == 0:
        return value
    if to_dtype(value.dtype) is None:
        raise NKISimulationError(
            "input.dtype",
            f"argument {name!r} has dtype {value.dtype}, "
            "which NKI does not support (e.g. float32, bfloat16, int32)",
        )
    if value.flags.c_contiguous:
        return wrap_input(value, name)
    # the kernel works on a C-ordered copy (HBM is row-major); what it writes there is
    # written back to the caller's array after the run (_write_back)
    array = np.ascontiguousarray(value)
    copies.append((value, array))
    return wrap_input(array, name)


def _write_back(copies: list[tuple[Any, Any]]) -> None:
    """Arguments are used in place: a non-contiguous argument (a Fortran-ordered array,
    a strided view) ran as a copy, so what the kernel wrote there goes back to it."""
    for original, copy in copies:
        if original.flags.writeable:
            np.copyto(original, copy)


def _def_line(kernel: Callable[..., Any]) -> int:
    """The line of the kernel's ``def`` (after its decorators)."""
    code = kernel.__code__
    lines = linecache.getlines(code.co_filename)
    for number in range(code.co_firstlineno, len(lines) + 1):
        if lines[number - 1].lstrip().startswith(("def ", "async def ")):
            return number
    return code.co_firstlineno


def _bind(
    kernel: Callable[..., Any],
    arrays: tuple[Any, ...],
    kwargs: dict[str, Any],
    copies: list[tuple[Any, Any]],
) -> inspect.BoundArguments:
    signature = inspect.signature(kernel)
    try:
        bound = signature.bind(*arrays, **kwargs)
    except TypeError as exc:
        raise NKISimulationError(
            "kernel.arguments", f"{kernel.__name__}{signature}: {exc}", "kernel", _def_line(kernel)
        ) from None
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            bound.arguments[name] = tuple(_wrap(v, f"{name}[{i}]", copies) for i, v in enumerate(value))
        elif kind is inspect.Parameter.VAR_KEYWORD:
            bound.arguments[name] = {k: _wrap(v, k, copies) for k, v in value.items()}
        else:
            bound.arguments[name] = _wrap(value, name, copies)
    return bound


def _return_line(kernel: Callable[..., Any]) -> int:
    """The line of the kernel's return statement when it has exactly one (else 0)."""
    lines = {
        i.positions.lineno
        for i in dis.get_instructions(kernel)
        if i.opname in ("RETURN_VALUE", "RETURN_CONST") and i.positions is not None
    }
    return (lines.pop() or 0) if len(lines) == 1 else 0


def _output(value: Any, kernel: Callable[..., Any]) -> Any:
    if isinstance(value, Tensor):
        if value.buffer.on_chip:
            raise NKISimulationError(
                "return.buffer",
                f"the kernel returns {value.record.describe()}; return "
                "HBM tensors (nl.ndarray(..., buffer=nl.shared_hbm))",
                "kernel",
                _return_line(kernel),
            )
        return value.data if value.data is value.storage.values else np.array(value.data)
    if isinstance(value, tuple | list) and value:
        return tuple(_output(v, kernel) for v in value)
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    raise NKISimulationError(
        "return.type",
        f"the kernel returns {type(value).__name__} {shown}; return an HBM tensor "
        "(nl.ndarray(..., buffer=nl.shared_hbm)) or a tuple of them",
        "kernel",
        _return_line(kernel),
    )


def _check_capacity(state: RunState) -> None:
    for buffer in (SBUF, PSUM):
        cap = capacity(state, buffer)
        peak = peak_usage(state.records, buffer.kind, cap)
        if peak.overflow is not None:
            rec = peak.overflow
            raise NKISimulationError(
                f"{buffer.kind}.capacity",
                f"live {buffer.label} reaches {peak.overflow_bytes} bytes per partition > "
                f"{cap} ({state.target.name}) when {rec.describe()} is allocated "
                f"({peak.live_at_overflow} tiles live)",
                rec.instruction,
                rec.line,
            )


class Simulator:
    """A kernel ready to run on numpy arrays.

    >>> sim = Simulator(source)                       # doctest: +SKIP
    >>> out = sim.run(a, b)                           # doctest: +SKIP
    >>> sim.report.peak_sbuf_bytes                    # doctest: +SKIP

    ``kernel_or_source`` is NKI module source text or a function; ``kernel_name`` picks
    the kernel when the source defines several; ``max_instructions`` and ``timeout``
    bound each run (see :func:`simulate`). ``report`` holds the
    :class:`SimulationReport` of the latest run (also when its capacity check failed).
    """

    def __init__(
        self,
        kernel_or_source: Any,
        *,
        target: str | Target = "trn2",
        kernel_name: str | None = None,
        max_instructions: int | None = DEFAULT_MAX_INSTRUCTIONS,
        timeout: float | None = DEFAULT_TIMEOUT,
        profile: bool = False,
    ) -> None:
        check_limits(max_instructions, timeout)
        check_arguments(kernel_name, profile=profile)
        self.max_instructions = max_instructions
        self.timeout = timeout
        self.target = get_target(target)
        if self.target.family != "neuron":
            raise NKISimulationError(
                "target.family", f"target {self.target.name} is not an AWS Neuron core", "simulate"
            )
        self.source = load_source(kernel_or_source, kernel_name)
        self.report: SimulationReport | None = None
        self.profiling = profile
        """Time the instruction stream of each run (``report.profile``)."""

    @property
    def peak_sbuf_bytes(self) -> int:
        """Peak live SBUF bytes per partition of the latest run."""
        return self._last_report().peak_sbuf_bytes

    @property
    def peak_psum_bytes(self) -> int:
        """Peak live PSUM bytes per partition of the latest run."""
        return self._last_report().peak_psum_bytes

    def _last_report(self) -> SimulationReport:
        if self.report is None:
            raise NKISimulationError("simulation.inactive", "run() the simulator first", "simulate")
        return self.report

    def run(self, *arrays: Any, **kwargs: Any) -> Any:
        """Run the kernel on ``arrays`` (and keyword arguments); return its outputs."""
        state = RunState(self.target, self.source.filename, self.max_instructions)
        if self.profiling:
            state.timing = timing_recorder()
        token = activate(state)
        try:
            with np.errstate(all="ignore"), _single_threaded_blas():
                outputs = contained(lambda: self._execute(arrays, kwargs), self.timeout, self.source.filename)
        finally:
            deactivate(token)
        self.report = self._make_report(state)
        _check_capacity(state)
        if state.timing is not None:
            self.report = replace(self.report, profile=profile_of(state))
        return outputs

    def _execute(self, arrays: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            kernel = instantiate(self.source, build_modules(self.target))
        except NKISimulationError:
            raise
        except Exception as exc:
            raise _python_error(exc, self.source, "kernel.source") from exc
        copies: list[tuple[Any, Any]] = []
        bound = _bind(kernel, arrays, kwargs, copies)
        try:
            result = kernel(*bound.args, **bound.kwargs)
        except NKISimulationError:
            raise
        except Exception as exc:
            raise _python_error(exc, self.source) from exc
        outputs = _output(result, kernel)
        _write_back(copies)
        return outputs

    def _make_report(self, state: RunState) -> SimulationReport:
        sbuf_cap, psum_cap = capacity(state, SBUF), capacity(state, PSUM)
        return SimulationReport(
            target=self.target.name,
            instructions=state.step,
            instruction_counts=dict(state.counts),
            allocations=state.allocations,
            peak_sbuf_bytes=peak_usage(state.records, "sbuf", sbuf_cap).bytes,
            peak_psum_bytes=peak_usage(state.records, "psum", psum_cap).bytes,
            sbuf_capacity=sbuf_cap,
            psum_capacity=psum_cap,
        )


def simulate(
    kernel_or_source: Any,
    *arrays: Any,
    target: str | Target = "trn2",
    kernel_name: str | None = None,
    report: bool = False,
    max_instructions: int | None = DEFAULT_MAX_INSTRUCTIONS,
    timeout: float | None = DEFAULT_TIMEOUT,
    **kwargs: Any,
) -> Any:
    """Run an NKI kernel on numpy arrays and return its output(s): HBM tensors, as numpy
    arrays (a tuple of them for several); a kernel returning anything else is an error.

    **The kernel runs as Python, in this process, with full builtins**: NKI kernels are
    Python, and this executes the source (or function) as given, so it can do whatever
    Python code can (read and write files, start processes). Simulate only kernels you
    would run. The limits below bound time and work, not what the code may touch; the
    command line (``nkigym-graph simulate``) runs the kernel in a child process.

    ``max_instructions`` (default 10,000,000 NKI calls) and ``timeout`` (default 300 s of
    wall time) bound one run; ``None`` disables either. Past them, or when the kernel
    calls ``sys.exit``, the run stops with an ``NKISimulationError`` (rules
    ``limit.instructions``, ``limit.time``, ``kernel.exit``); a real Ctrl-C still
    interrupts (see ``nkigym_graph.nki_sim.limits``).

    ``report=True`` returns ``(outputs, SimulationReport)``; the report's ``profile``
    times the run (:func:`nkigym_graph.nki_sim.profile`). Other keyword arguments go to
    the kernel.
    """
    check_arguments(kernel_name, report=report)
    sim = Simulator(
        kernel_or_source,
        target=target,
        kernel_name=kernel_name,
        max_instructions=max_instructions,
        timeout=timeout,
        profile=report,
    )
    outputs = sim.run(*arrays, **kwargs)
    if report:
        assert sim.report is not None
        return outputs, sim.report
    return outputs
