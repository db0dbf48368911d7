"""The micro-ops of a group of nodes that becomes one graph op, in execution order.

A group has one exit node (its result leaves the group); every other member is read
only inside it. Reads of members become local references; everything else stays a
source (an input of the graph op).

Two decisions are made here:

- a ``relu`` (``datacopy`` with ``relu_en``) whose operand is an elementwise result read
  by nothing else folds into that op as its ``relu_en`` output stage;
- the order is a post-order walk from the exit that visits, among an op's operands, the
  ones with more matmuls/reduces behind them first. Schedules are cut after each
  matmul/reduce (seed 004 rule 7), so elementwise work lands in the schedule of its first
  reader instead of being stranded in an earlier one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .nodes import Internal, NodeGraph, NodeSource, Source
from .shapes import tile_shape
from .walk import post_order

CONTRACTING = frozenset({"matmul", "reduce"})
RELU_FOLDS_INTO = frozenset(
    {"datacopy", "add", "subtract", "multiply", "exp", "log", "sqrt", "reciprocal", "sigmoid", "tanh",
     "square", "abs"}
)  # fmt: skip

Operand = int | Source
"""A local micro-op index, or a source outside the group."""


@dataclass
class Sub:
    """One micro-op of the group."""

    type: str
    inputs: list[Operand]
    attributes: dict[str, Any]
    shape: tuple[int, int]
    label: str

    @property
    def tiles(self) -> tuple[int, int]:
        return tile_shape(self.shape)

    @property
    def contracts(self) -> bool:
        return self.type in CONTRACTING


@dataclass
class GroupMicros:
    """The group's micro-ops, the exit's index and the execution order."""

    subs: list[Sub]
    exit: int
    order: list[int]

    def readers(self) -> dict[int, list[tuple[int, int]]]:
        """``index -> [(reader index, operand position), ...]`` in execution order."""
        out: dict[int, list[tuple[int, int]]] = {i: [] for i in self.order}
        for i in self.order:
            for position, operand in enumerate(self.subs[i].inputs):
                if isinstance(operand, int):
                    out[operand].append((i, position))
        return out

    def external(self) -> list[tuple[int, int, Source]]:
        """``(reader, position, source)`` of every operand read from outside the group."""
        return [
            (i, p, o) for i in self.order for p, o in enumerate(self.subs[i].inputs) if not isinstance(o, int)
        ]


def _flatten(graph: NodeGraph, members: list[int]) -> tuple[list[Sub], dict[Internal, int]]:
    inside = set(members)
    subs: list[Sub] = []
    index: dict[Internal, int] = {}
    for node_id in members:
        node = graph.nodes[node_id]
        for micro in node.micros:
            inputs: list[Operand] = []
            for ref in micro.inputs:
                if isinstance(ref, Internal):
                    inputs.append(index[ref])
                elif isinstance(ref, NodeSource) and ref.node in inside:
                    inputs.append(index[graph.nodes[ref.node].result.ref])
                else:
                    inputs.append(ref)
            index[micro.ref] = len(subs)
            subs.append(Sub(micro.type, inputs, dict(micro.attributes), micro.shape, node.label))
    return subs, index


def _fold_relus(subs: list[Sub]) -> dict[int, int]:
    """Fold relu copies into their producers; returns ``copy index -> producer index``."""
    readers: dict[int, int] = {}
    for sub in subs:
        for operand in sub.inputs:
            if isinstance(operand, int):
                readers[operand] = readers.get(operand, 0) + 1
    alias: dict[int, int] = {}
    for i, sub in enumerate(subs):
        source = sub.inputs[0] if sub.inputs else None
        if not (sub.type == "datacopy" and sub.attributes.get("relu_en") and isinstance(source, int)):
            continue
        producer = subs[source]
        if (
            readers.get(source) == 1
            and producer.type in RELU_FOLDS_INTO
            and not producer.attributes.get("relu_en")
        ):
            producer.attributes["relu_en"] = True
            alias[i] = source
    for sub in subs:
        sub.inputs = [alias.get(o, o) if isinstance(o, int) else o for o in sub.inputs]
    return alias


def _order(subs: list[Sub], exit_index: int) -> list[int]:
    weight: list[int] = []  # matmuls/reduces behind each result (inputs precede readers)
    for sub in subs:
        inner = sum(weight[o] for o in dict.fromkeys(sub.inputs) if isinstance(o, int))
        weight.append(inner + (1 if sub.contracts else 0))

    def operands(i: int) -> list[int]:
        found = [o for o in dict.fromkeys(subs[i].inputs) if isinstance(o, int)]
        return sorted(found, key=lambda o: -weight[o])

    return post_order([exit_index], operands)


def collect(graph: NodeGraph, members: list[int], exit_node: int) -> GroupMicros:
    """The group's micro-ops in execution order (``members`` in topological order)."""
    subs, index = _flatten(graph, members)
    alias = _fold_relus(subs)
    exit_index = index[graph.nodes[exit_node].result.ref]
    exit_index = alias.get(exit_index, exit_index)
    return GroupMicros(subs, exit_index, _order(subs, exit_index))
