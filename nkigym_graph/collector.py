"""Pausing Python's cyclic garbage collector around bulk work.

Building a snapshot or analysing a large program allocates hundreds of thousands of
small acyclic tuples and dicts; each allocation burst triggers collection passes that
rescan the whole (growing) heap, which makes large builds superlinear. The pause is
scoped and restores the collector's previous state.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block (reference counting still frees)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
