"""What a simulated kernel may consume, and what it may not do to its caller.

A kernel is Python run with full builtins, so these bound it from outside:

- **Instructions**: at most ``max_instructions`` NKI calls (default
  ``DEFAULT_MAX_INSTRUCTIONS``); counted where every call already advances the
  live-range clock (``RunState.begin``), so the check is one integer comparison.
- **Wall time**: at most ``timeout`` seconds (default ``DEFAULT_TIMEOUT``). A watchdog
  thread, started only when a timeout is set, waits for the deadline and then raises
  :class:`KernelTimeout` *in the kernel's thread* through CPython's
  ``PyThreadState_SetAsyncExc``, only while that thread runs kernel code (so no raise
  lands in the caller after the kernel returns). This costs nothing per instruction or
  line, needs no signal handler (so it works in any thread, and leaves ``SIGALRM`` to
  the caller) and stops a pure-Python ``while True: pass``. A kernel that catches it is
  raised at again every ``REPEAT_SECONDS``, and its run fails with ``limit.time`` even if
  it then returns; one that catches every exception forever, or sits in one long C call
  (``time.sleep``, a huge numpy operation), cannot be stopped from inside the process:
  the CLI runs kernels in a child process with resource limits for that.
- **Exits**: ``SystemExit`` (``sys.exit``) and other exceptions that are not
  ``Exception`` raised by the kernel become ``NKISimulationError`` rule ``kernel.exit``.
  ``KeyboardInterrupt`` propagates only when it is a real interrupt: in the main thread
  the run wraps the ``SIGINT`` handler to note that the signal arrived; a
  ``KeyboardInterrupt`` the kernel raises itself (without the signal) is ``kernel.exit``.
  A kernel that sends itself ``SIGINT`` does interrupt (it can also just call
  ``os._exit``: the child process of the CLI is the containment for that).

``None`` disables a limit.
"""

from __future__ import annotations

import ctypes
import functools
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

from nkigym_graph.ir.arguments import require_type
from nkigym_graph.nki_sim.errors import NKISimulationError
from nkigym_graph.nki_sim.state import traceback_line

T = TypeVar("T")

DEFAULT_MAX_INSTRUCTIONS = 10_000_000
"""NKI instructions one run may issue (a 4096^3 matmul kernel issues about 10^5)."""
DEFAULT_TIMEOUT = 300.0
"""Seconds of wall time one run may take."""
REPEAT_SECONDS = 0.05
"""How often the watchdog raises again in a kernel that caught :class:`KernelTimeout`."""


def check_arguments(kernel_name: object, **flags: object) -> None:
    """Rule ``argument.value``: ``kernel_name`` is a str or None, each flag True or False."""
    error = functools.partial(NKISimulationError, "argument.value", instruction="simulate")
    if kernel_name is not None:
        require_type(kernel_name, str, "kernel_name", error, "a kernel function's name or None")
    for name, flag in flags.items():
        require_type(flag, bool, name, error, "True or False")


def check_limits(max_instructions: object, timeout: object) -> None:
    """Rule ``limit.value``: each limit is None or a non-negative number (an int for
    ``max_instructions``)."""
    if max_instructions is not None and (type(max_instructions) is not int or max_instructions < 0):
        raise NKISimulationError(
            "limit.value",
            f"max_instructions must be a non-negative int or None, got {max_instructions!r}",
            "simulate",
        )
    if timeout is not None and not (
        isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout >= 0
    ):
        raise NKISimulationError(
            "limit.value",
            f"timeout must be a non-negative number of seconds or None, got {timeout!r}",
            "simulate",
        )


class KernelTimeout(BaseException):
    """Raised inside a kernel past its deadline (a ``BaseException``, so ``except
    Exception`` in the kernel or the simulator does not catch it)."""


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in the thread at its next bytecode (None: cancel a pending one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc else None
    )


class _Watchdog:
    """Raises :class:`KernelTimeout` in the calling thread after ``seconds``, but only
    while that thread runs kernel code (a frame of ``filename`` inside ``contained``), so
    no raise lands in the caller once the kernel has returned."""

    def __init__(self, seconds: float, filename: str) -> None:
        self.thread_id = threading.get_ident()
        self.filename = filename
        self.deadline = time.monotonic() + seconds
        self.fired = False
        self.gate = threading.Lock()
        self.finished = threading.Event()
        threading.Thread(target=self._watch, name="nki-sim-watchdog", daemon=True).start()

    def _in_kernel(self) -> bool:
        """Whether a kernel frame lies inside the thread's ``contained`` call."""
        frame = sys._current_frames().get(self.thread_id)
        while frame is not None:
            code = frame.f_code
            if code is contained.__code__:
                return False
            if code.co_filename == self.filename:
                return True
            frame = frame.f_back
        return False

    def _watch(self) -> None:
        wait = max(0.0, self.deadline - time.monotonic())
        while not self.finished.wait(wait):
            with self.gate:
                if self.finished.is_set():
                    return
                if self._in_kernel():
                    self.fired = True
                    _raise_in(self.thread_id, KernelTimeout)
            wait = REPEAT_SECONDS

    def stop(self) -> None:
        """After this returns nothing is raised any more, and a pending raise is cancelled;
        one that arrives while stopping is absorbed (``fired`` says the deadline passed)."""
        while True:
            try:
                self.finished.set()
                with self.gate:
                    pass
                _raise_in(self.thread_id, None)
                return
            except KernelTimeout:
                self.fired = True


@contextmanager
def _noting_interrupts() -> Iterator[list[bool]]:
    """Yields ``[real]``: set when SIGINT arrives during the block (main thread only)."""
    real = [False]
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if in_main else None
    if not callable(previous):
        yield real
        return

    def note(signum: int, frame: FrameType | None) -> Any:
        real[0] = True
        return previous(signum, frame)

    signal.signal(signal.SIGINT, note)
    try:
        yield real
    finally:
        signal.signal(signal.SIGINT, previous)


def contained(run: Callable[[], T], timeout: float | None, filename: str) -> T:
    """``run()`` under the wall-time limit, with the kernel's exits made errors (see the
    module docstring); ``filename`` is the kernel's source file."""
    with _noting_interrupts() as real:
        watchdog = _Watchdog(timeout, filename) if timeout is not None else None
        try:
            try:
                result = run()
            finally:
                if watchdog is not None:
                    watchdog.stop()
            if watchdog is not None and watchdog.fired:
                raise KernelTimeout
            return result
        except KernelTimeout as exc:
            if watchdog is not None:
                watchdog.stop()
            line = traceback_line(exc.__traceback__, filename)  # where the kernel was stopped
            raise NKISimulationError(
                "limit.time", f"the kernel ran longer than {timeout} s (timeout=)", "kernel", line
            ) from None
        except KeyboardInterrupt as exc:
            if real[0]:
                raise
            raise _exit_error(exc, filename) from None
        except Exception:
            raise
        except BaseException as exc:
            raise _exit_error(exc, filename) from None


def _exit_error(exc: BaseException, filename: str) -> NKISimulationError:
    detail = f"the kernel raised {type(exc).__name__}({', '.join(map(repr, exc.args))})"
    if isinstance(exc, SystemExit):
        detail += ", as sys.exit does; a kernel cannot end the process"
    return NKISimulationError("kernel.exit", detail, "kernel", traceback_line(exc.__traceback__, filename))
