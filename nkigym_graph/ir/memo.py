"""Values derived from one program snapshot, computed once per snapshot.

Snapshots are immutable, so anything computed from one stays true for it. ``memo``
keeps such a value in ``Program.memo`` (the snapshot's store for derived values, which
the IR itself never reads) under ``key``.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> program = tiled_matmul(128, 128, 128)
>>> memo(program, "statements", len), memo(program, "statements", lambda p: -1)
(5, 5)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


def memo(program: Any, key: Hashable, build: Callable[[Any], T]) -> T:
    """``build(program)``, computed once per snapshot and ``key``."""
    store = program.memo
    if key in store:
        return store[key]  # type: ignore[no-any-return]
    value = store[key] = build(program)
    return value
