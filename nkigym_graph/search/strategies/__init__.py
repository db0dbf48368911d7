"""The search strategies, in a table: name -> run function, default budget, options.

A strategy is ``run(session, **options)`` over a ``nkigym_graph.search.session.Session``;
it stops when its own criterion is met or ``session.exhausted``. The session keeps the
best state, so a strategy only decides which states to expand.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from nkigym_graph.ir.arguments import require_int, require_type
from nkigym_graph.search.errors import SearchError
from nkigym_graph.search.strategies import beam, exhaustive, greedy, random_walk, schedule


@dataclass(frozen=True)
class Strategy:
    """One search strategy."""

    name: str
    run: Callable[..., None]
    budget: int
    """Default budget: distinct states (for ``random``: states collected)."""
    summary: str
    transforms: tuple[str, ...] = (
        "data_reuse",
        "operand_merge",
        "reduction_merge",
        "scale_after_matmul",
        "dead_code",
    )
    """The transforms it searches with when ``search`` is given none."""
    budget_counts: str = "states"
    """What the budget counts: ``states`` (distinct states created) or ``collected``."""

    @property
    def options(self) -> Mapping[str, Any]:
        """The options ``run`` accepts, with their defaults."""
        params = list(inspect.signature(self.run).parameters.values())[1:]
        return MappingProxyType({p.name: p.default for p in params})

    def bind(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` checked against what the strategy accepts."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            accepted = ", ".join(f"{k}={v!r}" for k, v in self.options.items()) or "none"
            raise SearchError(f"strategy {self.name!r} has no option(s) {unknown}; it accepts: {accepted}")
        return {key: self._checked(key, value) for key, value in options.items()}

    def _checked(self, key: str, value: Any) -> Any:
        """An option value of the kind its default is: a bool, or an int of at least
        ``OPTION_MINIMUMS`` (1 unless listed); None where the default is None."""
        default = self.options[key]
        name = f"{self.name} option {key}"
        if isinstance(default, bool):
            return require_type(value, bool, name, SearchError, "True or False")
        if value is None and default is None:
            return None
        return require_int(value, name, SearchError, minimum=OPTION_MINIMUMS.get(key, 1))


OPTION_MINIMUMS: Mapping[str, int] = MappingProxyType({"min_depth": 0, "max_depth": 0})
"""The smallest value of integer strategy options that may be 0 (the others start at 1)."""


STRATEGIES: Mapping[str, Strategy] = MappingProxyType(
    {
        s.name: s
        for s in (
            Strategy("exhaustive", exhaustive.run, 1000, "breadth-first over single matches"),
            Strategy(
                "random",
                random_walk.run,
                100,
                "seeded depth-uniform random expansion",
                budget_counts="collected",
            ),
            Strategy(
                "greedy", greedy.run, 10_000, "best successor while it improves, then the joint fixpoint"
            ),
            Strategy("beam", beam.run, 10_000, "keep the best `width` states each round"),
            Strategy(
                "schedule",
                schedule.run,
                2_000,
                "saturate the structure, then the kernel schedule choice by choice",
                (
                    "data_reuse",
                    "operand_merge",
                    "reduction_merge",
                    "scale_after_matmul",
                    "dead_code",
                    "loop_order",
                    "block_size",
                    "buffer_count",
                    "inner_order",
                    "run_ahead",
                    "rfactor",
                ),
            ),
        )
    }
)


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name``."""
    try:
        return STRATEGIES[name]
    except (KeyError, TypeError):
        raise SearchError(
            f"unknown search strategy {name!r}; known: {', '.join(sorted(STRATEGIES))}"
        ) from None
