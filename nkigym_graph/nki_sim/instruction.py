"""The wrapper every public ``nl`` / ``nisa`` function goes through.

It names the instruction for error messages, advances the live-range clock, counts the
call for the report, and turns Python's argument-binding ``TypeError`` (an unknown
keyword, a missing argument) into an :class:`NKISimulationError`; any other Python error
inside the instruction becomes ``kernel.exception`` naming the instruction. A wrapped function
called from inside another one (``nl.matmul`` built on ``nc_matmul``) runs as part of
its caller: no new step, no new name.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from nkigym_graph.nki_sim.errors import NKISimulationError
from nkigym_graph.nki_sim.state import current, error

P = ParamSpec("P")
R = TypeVar("R")

_UNEXPECTED = re.compile(r"unexpected keyword argument '(\w+)'")


def instruction(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate the implementation of the NKI call ``name`` (e.g. ``"nisa.nc_matmul"``)."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            state = current()
            if state.instruction is not None:
                return fn(*args, **kwargs)
            state.begin(name)
            try:
                result = fn(*args, **kwargs)
                if state.timing is not None:
                    state.timing.record(name, fn, args, kwargs, result)
                return result
            except NKISimulationError:
                raise
            except TypeError as exc:
                tb = exc.__traceback__
                if tb is None or tb.tb_next is not None:
                    raise error("kernel.exception", f"TypeError: {exc}") from exc
                found = _UNEXPECTED.search(str(exc))
                if found:
                    raise error("unknown_keyword", f"unknown keyword argument {found.group(1)!r}") from None
                raise error("bad_arguments", str(exc).split(") ", 1)[-1]) from None
            except Exception as exc:
                raise error("kernel.exception", f"{type(exc).__name__}: {exc}") from exc
            finally:
                state.instruction = None

        return run

    return decorate
