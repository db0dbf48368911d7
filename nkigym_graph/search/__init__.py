"""Search over rewrite sequences: a state graph keyed by canonical hash, strategies
(exhaustive, random, greedy, beam), numeric verification of every state against the
root with memoized interpretation, replay of the found path, and parallel evaluation
through ``concurrent.futures`` executors.
"""

from nkigym_graph.numeric.equivalence import Verifier, VerifySettings
from nkigym_graph.search.errors import SearchError
from nkigym_graph.search.replay import replay
from nkigym_graph.search.result import SearchResult, SearchStats
from nkigym_graph.search.run import DEFAULT_TRANSFORMS, search
from nkigym_graph.search.state import State, Step
from nkigym_graph.search.strategies import STRATEGIES, Strategy, get_strategy

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
