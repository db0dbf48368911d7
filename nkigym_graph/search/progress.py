"""A one-line progress display on stderr for long searches.

Shown only when stderr is a terminal (or when forced with ``progress=True``); silent
otherwise. Redrawn at most a few times a second: states seen, duplicates, best
modeled time so far and the rate of new states.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

_INTERVAL = 0.25


class Progress:
    """The display (a no-op when disabled)."""

    def __init__(self, label: str, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.label = label
        self.started = time.perf_counter()
        self._last = 0.0
        self._drawn = False

    def update(
        self, states: int, duplicates: int, best_seconds: float, extra: str = "", force: bool = False
    ) -> None:
        """Redraw if enough time has passed (or ``force``)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self._last < _INTERVAL:
            return
        self._last = now
        elapsed = max(now - self.started, 1e-9)
        line = (
            f"\r{self.label}: {states} states ({duplicates} duplicates), best {best_seconds * 1e6:.2f} us "
            f"modeled, {states / elapsed:.1f} states/s{extra}"
        )
        self.stream.write(line)
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """End the line."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
