"""Describing an exception raised by code that is not ours (a user's function, a plugin):
one short line with its type, message and the line of that code that raised it.

>>> try:
...     1 / 0
... except ZeroDivisionError as err:
...     print(describe(err))
ZeroDivisionError: division by zero
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path

_PACKAGE = str(Path(__file__).resolve().parent) + os.sep
_LONGEST = 200


def describe(err: BaseException) -> str:
    """``AttributeError: ...``, cut to one short line."""
    message = str(err).strip()
    text = f"{type(err).__name__}: {message.splitlines()[0]}" if message else type(err).__name__
    return text if len(text) <= _LONGEST else text[: _LONGEST - 3] + "..."


def where(err: BaseException) -> str:
    """`` (at file.py:12: `code`)``: the innermost frame outside nkigym_graph, or ``""``."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if not _ours(f.filename)]
    if not frames:
        return ""
    frame = frames[-1]
    code = (frame.line or "").strip()
    code = code if len(code) <= 80 else code[:77] + "..."
    return f" (at {frame.filename}:{frame.lineno}{': `' + code + '`' if code else ''})"


def _ours(filename: str) -> bool:
    try:
        return str(Path(filename).resolve()).startswith(_PACKAGE)
    except (OSError, ValueError):
        return False
