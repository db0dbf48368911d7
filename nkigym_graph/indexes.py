"""Graph-database-style indexes of a program, built once in one pass.

Transforms ask these instead of scanning: statements by op, loads by source tensor,
consumers and writers of a variable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from nkigym_graph.statement import Statement

if TYPE_CHECKING:
    from nkigym_graph.derivation import Derivation


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
        by_op, loads, consumers, writers = cls.build_partial(statements, range(len(statements)))
        return cls(
            by_op=_freeze(by_op),
            loads_by_source=_freeze(loads),
            consumers=_freeze(consumers),
            writers=_freeze(writers),
        )

    @staticmethod
    def build_partial(statements: Sequence[Statement], nodes: Iterable[int]) -> tuple[dict, dict, dict, dict]:
        """The four lookups (as lists) over the statements at ``nodes`` (ascending)."""
        by_op: dict[str, list[int]] = {}
        loads: dict[str, list[int]] = {}
        consumers: dict[str, list[tuple[int, int]]] = {}
        writers: dict[str, list[int]] = {}
        for node in nodes:
            stmt = statements[node]
            op = stmt.op
            by_op.setdefault(op.name, []).append(node)
            if op.name == "load":
                loads.setdefault(stmt.operands[0].var, []).append(node)
            for position, operand in stmt.read_items():
                consumers.setdefault(operand.var, []).append((node, position))
            for position in op.write_positions:
                writers.setdefault(stmt.operands[position].var, []).append(node)
        return by_op, loads, consumers, writers

    @classmethod
    def derived(
        cls, parent: ProgramIndex, statements: Sequence[Statement], derivation: Derivation
    ) -> ProgramIndex:
        """The index of a derived snapshot: the parent's, positions shifted, the changed
        statements re-entered."""
        new_of, old_of, changed = derivation.new_of, derivation.old_of, derivation.changed
        edited = {old_of[node] for node in changed}
        fresh = cls.build_partial(statements, sorted(changed))

        def shift(entries: tuple[int, ...], extra: list[int]) -> tuple[int, ...]:
            kept = [new_of[old] for old in entries if new_of[old] >= 0 and old not in edited]
            return tuple(sorted(kept + extra)) if extra else tuple(kept)

        def shift_pairs(entries: tuple[tuple[int, int], ...], extra: list[tuple[int, int]]) -> tuple:
            kept = [(new_of[old], p) for old, p in entries if new_of[old] >= 0 and old not in edited]
            return tuple(sorted(kept + extra)) if extra else tuple(kept)

        def merge(old: Mapping[str, tuple], new: dict[str, list], shifter) -> Mapping:  # type: ignore[no-untyped-def]
            out = {}
            for key in old.keys() | new.keys():
                entries = shifter(old.get(key, ()), new.get(key, []))
                if entries:
                    out[key] = entries
            return MappingProxyType(out)

        return cls(
            by_op=merge(parent.by_op, fresh[0], shift),
            loads_by_source=merge(parent.loads_by_source, fresh[1], shift),
            consumers=merge(parent.consumers, fresh[2], shift_pairs),
            writers=merge(parent.writers, fresh[3], shift),
        )


def _freeze(mapping: dict) -> Mapping:
    return MappingProxyType({k: tuple(v) for k, v in mapping.items()})
