"""The relaxed collector restores the thresholds and leaves nothing young or frozen."""

from __future__ import annotations

import gc

from nkigym_graph.ir.collector import RELAXED_THRESHOLDS, collector_relaxed


class _Node:
    """A tracked object (a cycle may go through it)."""

    def __init__(self) -> None:
        self.other: object = None


def _in_generation(obj: object, generation: int) -> bool:
    return any(found is obj for found in gc.get_objects(generation))


def test_objects_alive_at_exit_join_the_oldest_generation() -> None:
    thresholds = gc.get_threshold()
    with collector_relaxed():
        assert gc.get_threshold() == RELAXED_THRESHOLDS
        kept = _Node()
        assert _in_generation(kept, 0)
    assert gc.get_threshold() == thresholds
    assert gc.get_freeze_count() == 0
    assert not _in_generation(kept, 0)
    assert _in_generation(kept, 2)


def test_cycles_made_inside_are_still_collected() -> None:
    with collector_relaxed():
        a, b = _Node(), _Node()
        a.other, b.other = b, a
    del a, b
    assert gc.collect() >= 2
