"""One BLAS thread while programs run: tiles are small, and results do not depend on the
machine's thread count (the interpreter and the memoized evaluator agree bit for bit)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _blas() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


class _Held:
    """The open ``one_blas_thread`` blocks: the limit is the process's, so the first
    block sets it and the last one to close restores it."""

    lock = threading.Lock()
    count = 0
    limiter: Any = None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Tiles are small: BLAS threads only add overhead (tens of times on a busy machine).
    Some BLAS builds also sum a product in another order with more threads, so one
    thread makes every run of a program give the same bits on any machine. Blocks nest:
    only the outermost one changes the limit (a search holds it for all its checks
    instead of setting it per program)."""
    with _Held.lock:
        if _Held.count == 0:
            _Held.limiter = _blas().limit(limits=1, user_api="blas")
        _Held.count += 1
    try:
        yield
    finally:
        with _Held.lock:
            _Held.count -= 1
            if _Held.count == 0:
                _Held.limiter.restore_original_limits()
                _Held.limiter = None
