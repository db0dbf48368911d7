"""Graph-database-style indexes of a program, built once in one pass.

Transforms ask these instead of scanning: statements by op, loads by source tensor,
consumers and writers of a variable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from nkigym_graph.statement import Statement


@dataclass(frozen=True)
class ProgramIndex:
    """Lookups over a program's statements (node ids are statement positions)."""

    by_op: Mapping[str, tuple[int, ...]]
    loads_by_source: Mapping[str, tuple[int, ...]]
    consumers: Mapping[str, tuple[tuple[int, int], ...]]
    """Variable -> ``(node, operand position)`` of every read."""
    writers: Mapping[str, tuple[int, ...]]

    @classmethod
    def build(cls, statements: Sequence[Statement]) -> ProgramIndex:
        by_op: dict[str, list[int]] = {}
        loads: dict[str, list[int]] = {}
        consumers: dict[str, list[tuple[int, int]]] = {}
        writers: dict[str, list[int]] = {}
        for node, stmt in enumerate(statements):
            op = stmt.op
            by_op.setdefault(op.name, []).append(node)
            if op.name == "load":
                loads.setdefault(stmt.operands[0].var, []).append(node)
            for position, operand in stmt.read_items():
                consumers.setdefault(operand.var, []).append((node, position))
            for position in op.write_positions:
                writers.setdefault(stmt.operands[position].var, []).append(node)
        return cls(
            by_op=_freeze(by_op),
            loads_by_source=_freeze(loads),
            consumers=_freeze(consumers),
            writers=_freeze(writers),
        )


def _freeze(mapping: dict) -> Mapping:
    return MappingProxyType({k: tuple(v) for k, v in mapping.items()})
