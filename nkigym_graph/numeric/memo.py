"""A least-recently-used cache bounded by the bytes of the arrays it holds.

>>> import numpy as np
>>> memo = ByteLRU(capacity=100)
>>> memo.put("a", np.zeros(8)); memo.put("b", np.zeros(8))   # 64 bytes each
>>> "a" in memo, "b" in memo, memo.nbytes
(False, True, 64)
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np


class ByteLRU:
    """Arrays by key; the least recently used go first once ``capacity`` bytes are exceeded."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.nbytes = 0
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()

    def get(self, key: str) -> np.ndarray | None:
        """The array under ``key`` (now most recently used), or None."""
        value = self._items.get(key)
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        self._items.move_to_end(key)
        return value

    def put(self, key: str, value: np.ndarray) -> None:
        """Keep ``value`` (read-only from now on) unless it alone exceeds the capacity."""
        if value.nbytes > self.capacity or key in self._items:
            return
        value.flags.writeable = False
        self._items[key] = value
        self.nbytes += value.nbytes
        while self.nbytes > self.capacity:
            _, old = self._items.popitem(last=False)
            self.nbytes -= old.nbytes

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)
