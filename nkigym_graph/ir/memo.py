"""Values derived from one program snapshot, computed once while the snapshot lives.

Snapshots are immutable, so anything computed from one stays true for it. ``memo``
keeps such values beside the snapshot (keyed by its identity, dropped when it is
collected) without the snapshot knowing about them.

>>> from nkigym_graph.synthetic import tiled_matmul
>>> program = tiled_matmul(128, 128, 128)
>>> memo(program, "statements", len), memo(program, "statements", lambda p: -1)
(5, 5)
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

_VALUES: dict[int, dict[Hashable, Any]] = {}
_LOCK = threading.Lock()


def memo(program: object, key: Hashable, build: Callable[[Any], T]) -> T:
    """``build(program)``, computed once per snapshot and ``key``."""
    ident = id(program)
    values = _VALUES.get(ident)
    if values is not None and key in values:
        return values[key]
    value = build(program)
    with _LOCK:
        values = _VALUES.get(ident)
        if values is None:
            values = _VALUES[ident] = {}
            weakref.finalize(program, _VALUES.pop, ident, None)
        values.setdefault(key, value)
        return values[key]
