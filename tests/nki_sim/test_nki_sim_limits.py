"""A simulated kernel is bounded in instructions and wall time, cannot end the process,
and must return HBM tensors. Limits are small so the tests stay fast; no test asserts a
timing."""

from __future__ import annotations

import os
import signal
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from nkigym_graph.nki_sim import NKISimulationError, Simulator, simulate

HEADER = """import sys
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
"""


def _kernel(body: str, tail: str = "    return out\n") -> str:
    lines = "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    return HEADER + lines + tail


def _input() -> np.ndarray:
    return np.ones((128, 64), np.float32)


def _rule(source: str, **limits: object) -> NKISimulationError:
    with pytest.raises(NKISimulationError) as caught:
        simulate(source, _input(), **limits)
    return caught.value


def test_an_endless_loop_of_instructions_stops_at_the_instruction_limit() -> None:
    source = _kernel("while True:\n    nisa.dma_copy(dst=out, src=a)")
    error = _rule(source, max_instructions=50, timeout=None)
    assert error.rule == "limit.instructions" and error.instruction == "nisa.dma_copy"
    assert "more than 50 instructions (max_instructions=)" in str(error) and error.line == 11


def test_a_pure_python_loop_stops_at_the_time_limit() -> None:
    error = _rule(_kernel("while True:\n    pass"), timeout=0.2)
    assert error.rule == "limit.time" and "longer than 0.2 s (timeout=)" in str(error)


def test_a_kernel_that_swallows_the_timeout_still_fails() -> None:
    body = "try:\n    while True:\n        pass\nexcept BaseException:\n    pass"
    assert _rule(_kernel(body), timeout=0.2).rule == "limit.time"


def test_the_time_limit_works_outside_the_main_thread() -> None:
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(simulate, _kernel("while True:\n    pass"), _input(), timeout=0.2)
        with pytest.raises(NKISimulationError, match=r"\[limit\.time\]"):
            future.result(timeout=60)


def test_module_level_code_is_bounded_too() -> None:
    source = "while True:\n    pass\n" + _kernel("")
    assert _rule(source, timeout=0.2).rule == "limit.time"


def test_a_kernel_within_its_limits_runs_and_nothing_fires_afterwards() -> None:
    source = _kernel("nisa.dma_copy(dst=out, src=a)")  # two instructions: nl.ndarray, dma_copy
    for _ in range(20):
        np.testing.assert_array_equal(simulate(source, _input(), max_instructions=2, timeout=0.05), _input())
    threading.Event().wait(0.2)  # a late raise from a watchdog would land here


@pytest.mark.parametrize("call", ["sys.exit(0)", "sys.exit('bye')", "raise SystemExit(3)"])
def test_a_kernel_cannot_exit_the_process(call: str) -> None:
    error = _rule(_kernel(call))
    assert error.rule == "kernel.exit" and "SystemExit" in str(error) and error.line == 10


def test_a_kernel_cannot_fake_an_interrupt() -> None:
    error = _rule(_kernel("raise KeyboardInterrupt"))
    assert error.rule == "kernel.exit" and "KeyboardInterrupt" in str(error)


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="signals need the main thread"
)
def test_a_real_interrupt_still_interrupts() -> None:
    # Python's own Ctrl-C handling, whatever handler an earlier test in this worker left
    # behind (a cluster client may install one that does not raise).
    earlier = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            simulate(_kernel("while True:\n    pass"), _input(), timeout=30)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, earlier)


@pytest.mark.parametrize(("value", "shown"), [("3", "int 3"), ("None", "NoneType None"), ("()", "tuple ()")])
def test_a_kernel_must_return_hbm_tensors(value: str, shown: str) -> None:
    error = _rule(_kernel("", tail=f"    return {value}\n"))
    assert error.rule == "return.type" and f"returns {shown}; return an HBM tensor" in str(error)


def test_an_hbm_tensor_larger_than_the_device_is_refused_before_allocating() -> None:
    error = _rule(_kernel("big = nl.ndarray((1000000, 1000000), nl.float32, buffer=nl.shared_hbm)"))
    assert error.rule == "alloc.hbm_capacity" and error.line == 10
    assert "HBM tensor (1000000, 1000000) float32 > 103079215104 bytes on trn2" in str(error)


def _looping_kernel(a):  # type: ignore[no-untyped-def]
    while True:
        pass


def test_a_function_kernel_defined_next_to_its_caller_is_bounded_too() -> None:
    with pytest.raises(NKISimulationError, match=r"\[limit\.time\]"):
        simulate(_looping_kernel, _input(), timeout=0.2)
    threading.Event().wait(0.2)  # a late raise from a watchdog would land here


@pytest.mark.parametrize(
    "limits",
    [{"max_instructions": -1}, {"max_instructions": 1.5}, {"timeout": "10"}, {"timeout": float("nan")}],
)
def test_limits_must_be_numbers_or_none(limits: dict[str, object]) -> None:
    error = _rule(_kernel(""), **limits)
    assert error.rule == "limit.value" and next(iter(limits)) in str(error)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"kernel_name": 5}, "kernel_name must be a kernel function's name or None, got int 5"),
        ({"report": "x"}, "report must be True or False, got str 'x'"),
    ],
)
def test_arguments_must_have_their_types(arguments: dict[str, object], message: str) -> None:
    error = _rule(_kernel(""), **arguments)
    assert error.rule == "argument.value" and message in str(error)


def test_a_simulator_names_its_profile_flag() -> None:
    with pytest.raises(NKISimulationError, match=r"\[argument\.value\].*profile must be True or False"):
        Simulator(_kernel(""), profile=None)  # type: ignore[arg-type]


def test_the_time_limit_names_the_line_the_kernel_was_stopped_at() -> None:
    """A timeout said ``kernel (line ?)``: the line of the endless loop was lost."""
    error = _rule(_kernel("while True:\n    pass"), timeout=0.2)
    assert error.rule == "limit.time" and error.line in (10, 11)
    assert "(line ?)" not in str(error)
