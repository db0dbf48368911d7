"""What a search returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx

from nkigym_graph.cost import CostReport
from nkigym_graph.ir.program import Program
from nkigym_graph.rewriting.transform import Match

STOP_REASONS = {"budget": ", stopped by the budget", "time": ", stopped by the time limit"}
"""How ``SearchStats`` prints why a search stopped (nothing when the strategy was done)."""


@dataclass(frozen=True)
class SearchStats:
    """Counters of one search."""

    strategy: str
    states: int
    """Distinct programs seen (the root included)."""
    duplicates: int
    """Successors that were already known (skipped without pricing or checking)."""
    verified: int
    """New states checked numerically against the root (sampled or full)."""
    fully_verified: int
    """Of those, and the best, how many were checked on every output element."""
    expansions: int
    """States whose successors were derived."""
    seconds: float
    """Wall-clock seconds of the search."""
    collected: int = 0
    """States counted by the budget of a random search (depth >= ``min_depth``)."""
    max_depth: int = 0
    stopped: str = "done"
    """Why the search ended: ``done`` (the strategy's own criterion), ``budget`` or
    ``time`` (``search(seconds=...)``)."""

    def __str__(self) -> str:
        collected = f", {self.collected} collected" if self.collected else ""
        stopped = STOP_REASONS.get(self.stopped, "")
        return (
            f"{self.states} states ({self.duplicates} duplicates skipped), {self.verified} verified "
            f"({self.fully_verified} in full), {self.expansions} expansions{collected}, "
            f"depth {self.max_depth}, {self.seconds:.2f} s{stopped}"
        )


@dataclass(frozen=True)
class SearchResult:
    """The best program found, how to get there from the root, and what it costs.

    ``path`` lists ``(transform name, match)`` from the root to ``best``; consecutive
    matches found in the same program (equal ``program_hash``) form one batch and are
    applied together (``nkigym_graph.search.replay``). ``graph`` is the state graph
    (nodes: canonical hashes with attribute ``state``; edges: attribute ``step``).
    Costs are modeled by the cost model, not measured.
    """

    best: Program
    path: list[tuple[str, Match]]
    cost: CostReport
    root_cost: CostReport
    stats: SearchStats
    graph: nx.DiGraph
    collected: tuple[str, ...] = ()
    """Hashes of the states a random search collected, in discovery order."""
    profile: Any = None
    """The best program's emitted NKI kernel timed by ``nki_sim.profile`` (the second
    yardstick; None when not confirmed, e.g. on a target that is not a NeuronCore)."""
    netlist: Any = None
    """On a Tenstorrent target, the best program's emitted Buda netlist checked (strict) and
    evaluated against the program (a ``NetlistConfirmation``; None when not confirmed)."""

    @property
    def speedup(self) -> float:
        """Modeled root time over modeled best time."""
        return self.root_cost.seconds / self.cost.seconds if self.cost.seconds else float("inf")

    def __str__(self) -> str:
        s = self.stats
        return (
            f"{s.strategy} search: {s.states} states ({s.duplicates} duplicates, {s.verified} verified) "
            f"in {s.seconds:.2f} s; best after {len(self.path)} rewrites: "
            f"modeled {self.cost.seconds * 1e6:.2f} us "
            f"(root {self.root_cost.seconds * 1e6:.2f} us, x{self.speedup:.2f}), MFU {self.cost.mfu:.1%} "
            f"(modeled, not measured)"
            + (
                f"; emitted kernel profiled at {self.profile.total_us:.2f} us, MFU {self.profile.mfu:.1%} "
                "(timing model, not measured)"
                if self.profile is not None
                else ""
            )
            + (f"; {self.netlist}" if self.netlist is not None else "")
        )
