"""Pausing or relaxing Python's cyclic garbage collector around bulk work.

Building a snapshot or analysing a large program allocates hundreds of thousands of
small acyclic tuples and dicts; each allocation burst triggers collection passes that
rescan the whole (growing) heap, which makes large builds superlinear. A search keeps
many snapshots alive and creates a few hundred objects per state: the collector's
full passes over that heap took a quarter of a 1024^3 search. Both helpers are scoped
and restore the collector's previous state.
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


RELAXED_THRESHOLDS = (1_000_000, 20, 20)
"""Collector thresholds during a search: young collections after 1M allocations
(instead of 700), full ones rarely. A young collection scans every young object (tens
of milliseconds per 100k); a 1024^3 search keeps ~170k new objects over 250 states,
which this lets it finish without one (garbage cycles are rare there and are collected
after the search)."""


@contextmanager
def collector_relaxed() -> Iterator[None]:
    """Inside the block, objects alive at entry are frozen (never rescanned) and the
    collector runs rarely; garbage cycles are still collected. At exit, the objects
    alive join the oldest generation (the young ones too: the restored thresholds would
    rescan up to ``RELAXED_THRESHOLDS[0]`` of them at the next allocation)."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*RELAXED_THRESHOLDS)
    try:
        yield
    finally:
        gc.freeze()
        gc.set_threshold(*thresholds)
        gc.unfreeze()
