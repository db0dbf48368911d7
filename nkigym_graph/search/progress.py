"""A one-line progress display on stderr for long searches.

Shown only when stderr is a terminal (or when forced with ``progress=True``); silent
otherwise. On a terminal one line is redrawn in place (carriage returns) at most a few
times a second; elsewhere (a log file, a pipe) plain lines are appended every few
seconds. Each says states seen, duplicates, best modeled time so far and the rate of
new states.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

_INTERVAL = 0.25
_LOG_INTERVAL = 5.0


class Progress:
    """The display (a no-op when disabled)."""

    def __init__(self, label: str, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.terminal = bool(isatty and isatty())
        self.enabled = self.terminal if enabled is None else enabled
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
        if not force and now - self._last < (_INTERVAL if self.terminal else _LOG_INTERVAL):
            return
        self._last = now
        elapsed = max(now - self.started, 1e-9)
        line = (
            f"{self.label}: {states} states ({duplicates} duplicates), best {best_seconds * 1e6:.2f} us "
            f"modeled, {states / elapsed:.1f} states/s{extra}"
        )
        self.stream.write(f"\r{line}" if self.terminal else f"{line}\n")
        self.stream.flush()
        self._drawn = self.terminal

    def close(self) -> None:
        """End the line."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
