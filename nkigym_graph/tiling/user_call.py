"""Running the user's function while tracing: its own exceptions become ``TracingError``.

A typo (``nkigym.activaton``), an op called with the wrong number of arguments, a
``raise``, ``sys.exit`` or runaway recursion in the user's code is reported as one named error
with the exception and the user's line, not as a traceback into the tracer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nkigym_graph.errors import NkigymError
from nkigym_graph.foreign_errors import describe, where
from nkigym_graph.tiling.errors import TracingError


def call_traced(func: Callable[..., Any], args: list[Any], name: str) -> Any:
    """``func(*args)``; a non-nkigym exception it raises becomes a ``TracingError``."""
    try:
        return func(*args)
    except NkigymError:
        raise
    except (Exception, SystemExit) as err:  # the user's code may raise anything, even exit
        raise TracingError(f"tracing {name!r} failed: {describe(err)}{where(err)}") from err
