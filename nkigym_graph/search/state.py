"""Search states and the state graph.

A state is a program reached from the root, keyed by its canonical hash. The state
graph is a ``networkx.DiGraph`` on those hashes: node attribute ``state`` holds the
``State``, edge attribute ``step`` the ``Step`` (a transform and the batches of
matches it applied: one match, one batch of non-conflicting matches found in the same
program, or successive batches up to the transform's fixpoint).
A state remembers the step by which it was first reached; following those back to
the root gives its path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx

from nkigym_graph.cost import CostReport
from nkigym_graph.rewriting.transform import Match
from nkigym_graph.search.derive import Candidate


@dataclass(frozen=True)
class Step:
    """One edge of the state graph: ``transform`` applied its ``batches`` in turn (the
    first found in the parent, each next one in the program the previous gave)."""

    transform: str
    batches: tuple[tuple[Match, ...], ...]

    def __post_init__(self) -> None:
        for match in self.matches:
            _ = match.program_hash  # a recorded match keeps its origin's hash, not the program

    @property
    def matches(self) -> tuple[Match, ...]:
        """Every match applied, in order."""
        return tuple(m for batch in self.batches for m in batch)

    def __str__(self) -> str:
        if len(self.batches) == 1 and len(self.batches[0]) == 1:
            return str(self.batches[0][0])
        sizes = "+".join(str(len(b)) for b in self.batches)
        return f"{self.transform} x{sizes}"


@dataclass(eq=False)
class State:
    """One distinct program of the search (its program may be dropped and rebuilt)."""

    hash: str
    depth: int
    cost: CostReport
    parent: str | None = None
    step: Step | None = None
    checked: str = "sampled"
    """``root``, ``sampled`` or ``full``: how it was verified."""
    order: int = 0
    """Discovery order (0 for the root)."""
    candidates: dict[tuple[str, str], Sequence[Candidate]] = field(default_factory=dict, repr=False)
    """Its successors' candidates by ``(transform name, mode)``, once analysed."""

    @property
    def key(self) -> tuple:
        """Total order for choosing: cost rank, then depth, then hash."""
        return (self.cost.rank, self.depth, self.hash)


class StateGraph:
    """The states seen so far and the steps between them."""

    def __init__(self, root: State) -> None:
        self.graph = nx.DiGraph()
        self.root = root
        self.graph.add_node(root.hash, state=root)

    def __contains__(self, key: object) -> bool:
        return key in self.graph

    def __getitem__(self, key: str) -> State:
        return self.graph.nodes[key]["state"]

    def __len__(self) -> int:
        return self.graph.number_of_nodes()

    def add(self, state: State) -> None:
        """A new state, linked to the parent it was reached from."""
        state.order = len(self)
        self.graph.add_node(state.hash, state=state)
        if state.parent is not None and state.step is not None:
            self.link(state.parent, state.hash, state.step)

    def link(self, parent: str, child: str, step: Step) -> None:
        """Record that ``step`` leads from ``parent`` to ``child`` (the first such step is kept)."""
        if not self.graph.has_edge(parent, child):
            self.graph.add_edge(parent, child, step=step)

    def steps_to(self, key: str) -> list[Step]:
        """The steps from the root to state ``key`` along first discoveries."""
        steps: list[Step] = []
        state = self[key]
        while state.parent is not None:
            assert state.step is not None
            steps.append(state.step)
            state = self[state.parent]
        steps.reverse()
        return steps

    def states(self) -> list[State]:
        """Every state, in discovery order."""
        return [data["state"] for _, data in self.graph.nodes(data=True)]
