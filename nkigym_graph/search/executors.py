"""Executors for parallel evaluation (``concurrent.futures``).

``None`` runs in this process. ``"process"`` or ``workers=N`` makes a
``ProcessPoolExecutor`` (shut down when the search ends); any ``Executor`` a caller
passes (a ``ThreadPoolExecutor``, Dask's ``Client.get_executor()``, ...) is used as
given and left running. Tasks are submitted in a fixed order and their results read
back in that order, so a search gives the same result with or without an executor.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any, TypeVar

from nkigym_graph.ir.arguments import require_int
from nkigym_graph.search.errors import SearchError

T = TypeVar("T")

WORKERS_PER_CPU = 4
"""``workers=N`` makes at most this many processes per CPU (each holds a copy of the
programs it evaluates; ``workers=10**6`` forked until memory ran out)."""


def resolve_executor(executor: Executor | str | None, workers: int | None) -> tuple[Executor | None, bool]:
    """The executor to use and whether the search owns it (and must shut it down)."""
    if workers is not None:
        most = WORKERS_PER_CPU * (os.cpu_count() or 1)
        workers = require_int(workers, "workers", SearchError, minimum=1)
        if workers > most:
            raise SearchError(
                f"workers={workers} is more than {most} ({WORKERS_PER_CPU} per CPU on this machine's "
                f"{os.cpu_count() or 1}); a process beyond that only adds memory"
            )
    if executor is None and workers is None:
        return None, False
    if executor is None or executor == "process":
        return ProcessPoolExecutor(max_workers=workers), True
    if isinstance(executor, Executor):
        if workers is not None:
            raise SearchError(
                f"workers={workers} makes a process pool, but an executor was given "
                f"({type(executor).__name__}); size that executor instead"
            )
        return executor, False
    raise SearchError(f"executor must be None, 'process' or a concurrent.futures.Executor, got {executor!r}")


def run_ordered(executor: Executor, function: Callable[..., T], tasks: Sequence[tuple[Any, ...]]) -> list[T]:
    """``function(*task)`` for every task on ``executor``, results in task order."""
    futures = [executor.submit(function, *task) for task in tasks]
    return [future.result() for future in futures]


def workers_of(executor: Executor) -> int:
    """How many tasks ``executor`` runs at once (its ``max_workers`` where it says, else
    the machine's cores)."""
    found = getattr(executor, "_max_workers", None)
    return found if isinstance(found, int) and found > 0 else (os.cpu_count() or 1)
