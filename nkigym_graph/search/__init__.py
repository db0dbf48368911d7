"""Search over rewrite sequences: a state graph keyed by canonical hash, strategies
(exhaustive, random, greedy, beam), numeric verification of every state against the
root with memoized interpretation, replay of the found path, and parallel evaluation
through ``concurrent.futures`` executors.

The package is also the ``search`` function: ``nkigym_graph.search(program, ...)`` is
``nkigym_graph.search.search(program, ...)`` (``nkigym_graph.search.run``). The
function and the package share the name ``nkigym_graph.search``, and the package must
be what that name holds, so that ``import nkigym_graph.search.remote as remote`` (and
any ``nkigym_graph.search.<module>``) finds its modules; calling it searches.
"""

import inspect
import sys
import types
from typing import Any

from nkigym_graph.numeric.equivalence import Verifier, VerifySettings
from nkigym_graph.search.errors import SearchError
from nkigym_graph.search.replay import replay
from nkigym_graph.search.result import SearchResult, SearchStats
from nkigym_graph.search.run import DEFAULT_TRANSFORMS, search
from nkigym_graph.search.state import State, Step
from nkigym_graph.search.strategies import STRATEGIES, Strategy, get_strategy


class _CallablePackage(types.ModuleType):
    """``nkigym_graph.search``: this package, callable as the ``search`` function."""

    def __call__(self, *args: Any, **kwargs: Any) -> SearchResult:
        return search(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
__signature__ = inspect.signature(search)
"""The signature of ``search``, which ``inspect.signature(nkigym_graph.search)`` reports."""

__all__ = [
    "DEFAULT_TRANSFORMS",
    "STRATEGIES",
    "SearchError",
    "SearchResult",
    "SearchStats",
    "State",
    "Step",
    "Strategy",
    "Verifier",
    "VerifySettings",
    "get_strategy",
    "replay",
    "search",
]
