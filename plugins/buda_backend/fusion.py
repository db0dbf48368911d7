"""Which nodes fuse into one graph op.

Groups grow backwards from the outputs (nodes in reverse topological order): a node joins
the group of its readers when all of them are in one group, it is not a program output,
no reader reads it transposed, repeated, stacked or spread (a fused op reads its
intermediates as they are; only a graph op's inputs carry those TMs), neither it nor the
group's exit reads through a transpose TM, and the grown group still builds into a fused
op that passes the constraint checker (``legal``: every rule of seed 004 and the
backend's own) and is not slower than the two ops it replaces (``fusion.slower``: a fused
op with a matmul runs on one column of cores). Otherwise the node starts a group of its
own, so what cannot fuse becomes a separate graph op. Each group has one exit (the only
member read from outside) and becomes one graph op.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .layout import PLAIN
from .nodes import NodeGraph, NodeSource

Legal = Callable[[list[int], int, int], list[str]]
"""``(members, exit, joining node) -> broken rule ids`` (empty when the group may be one op)."""


@dataclass
class Plan:
    """Groups as ``(members in topological order, exit)``, inputs before readers, and the
    rules that kept a node out of its readers' group."""

    groups: list[tuple[list[int], int]]
    splits: dict[int, list[str]] = field(default_factory=dict)


def _reshaping_read_of(node_id: int, ref: object) -> bool:
    """Whether ``ref`` reads ``node_id`` transposed, repeated, stacked or spread."""
    return isinstance(ref, NodeSource) and ref.node == node_id and (ref.transposed or ref.layout != PLAIN)


class _Planner:
    def __init__(self, graph: NodeGraph, legal: Legal) -> None:
        self.graph = graph
        self.legal = legal
        self.position = {n: k for k, n in enumerate(graph.nodes)}
        self.group_of: dict[int, int] = {}
        self.members: list[list[int]] = []
        self.exits: list[int] = []
        self.splits: dict[int, list[str]] = {}

    def _candidate(self, node_id: int) -> int | None:
        graph = self.graph
        readers = graph.consumers[node_id]
        if node_id in graph.outputs.values() or graph.nodes[node_id].transposed_reads or not readers:
            return None
        groups = {self.group_of[r] for r in readers}
        if len(groups) != 1:
            return None
        group = groups.pop()
        if graph.nodes[self.exits[group]].transposed_reads:
            return None
        for reader in readers:
            for ref in graph.nodes[reader].refs():
                if _reshaping_read_of(node_id, ref):
                    return None
        return group

    def run(self) -> Plan:
        for node_id in reversed(list(self.graph.nodes)):
            group = self._candidate(node_id)
            if group is not None:
                members = sorted([*self.members[group], node_id], key=self.position.__getitem__)
                broken = self.legal(members, self.exits[group], node_id)
                if not broken:
                    self.members[group] = members
                    self.group_of[node_id] = group
                    continue
                self.splits[node_id] = broken
            self.group_of[node_id] = len(self.members)
            self.members.append([node_id])
            self.exits.append(node_id)
        order = sorted(range(len(self.members)), key=lambda g: self.position[self.exits[g]])
        return Plan([(self.members[g], self.exits[g]) for g in order], self.splits)


def plan_groups(graph: NodeGraph, legal: Legal) -> Plan:
    """Group the nodes of ``graph`` (see the module docstring)."""
    return _Planner(graph, legal).run()
