"""Graph-database-style indexes of a program, built once in one pass.

Transforms ask these instead of scanning: statements by op, loads by source tensor,
consumers and writers of a variable.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from nkigym_graph.ir.statement import Statement

if TYPE_CHECKING:
    from nkigym_graph.ir.derivation import Derivation

Lists = dict[str, list[Any]]
"""A lookup while it is built: key -> entries."""


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
    def build_partial(
        statements: Sequence[Statement], nodes: Iterable[int]
    ) -> tuple[Lists, Lists, Lists, Lists]:
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
        """The index of a derived snapshot: each lookup is the parent's, positions
        shifted and the changed statements re-entered, worked out per key on first use."""
        edited = frozenset(derivation.old_of[node] for node in derivation.changed)
        fresh = cls.build_partial(statements, sorted(derivation.changed))
        new_of = derivation.new_of
        return cls(
            *(
                ShiftedLookup(old, new, new_of, edited, pairs=name == "consumers")
                for name, old, new in zip(
                    ("by_op", "loads_by_source", "consumers", "writers"),
                    (parent.by_op, parent.loads_by_source, parent.consumers, parent.writers),
                    fresh,
                    strict=True,
                )
            )
        )


_MISSING: tuple[Any, ...] = ()


class ShiftedLookup(Mapping[str, tuple[Any, ...]]):
    """A lookup of a derived snapshot, from its parent's (see ``ProgramIndex.derived``).

    Entries are positions (or ``(position, operand)`` pairs when ``pairs``); a key's
    entries are shifted from the parent's, dropping statements that were removed or
    edited, and merged with the edited statements' own entries.
    """

    __slots__ = ("_edited", "_fresh", "_memo", "_new_of", "_pairs", "_parent")

    def __init__(
        self,
        parent: Mapping[str, tuple[Any, ...]],
        fresh: Lists,
        new_of: Sequence[int],
        edited: frozenset[int],
        pairs: bool,
    ) -> None:
        self._parent = parent
        self._fresh = fresh
        self._new_of = new_of
        self._edited = edited
        self._pairs = pairs
        self._memo: dict[str, tuple[Any, ...]] = {}

    def _entries(self, key: str) -> tuple[Any, ...]:
        found = self._memo.get(key)
        if found is None:
            new_of, edited = self._new_of, self._edited
            old = self._parent.get(key, _MISSING)
            if self._pairs:
                kept = [(new_of[n], p) for n, p in old if new_of[n] >= 0 and n not in edited]
            else:
                kept = [new_of[n] for n in old if new_of[n] >= 0 and n not in edited]
            extra = self._fresh.get(key)
            found = self._memo[key] = tuple(sorted(kept + extra)) if extra else tuple(kept)
        return found

    def __getitem__(self, key: str) -> tuple[Any, ...]:
        found = self._entries(key)
        if not found:
            raise KeyError(key)
        return found

    def get(self, key: str, default: Any = None) -> Any:
        return self._entries(key) or default

    def __iter__(self) -> Iterator[str]:
        keys = dict.fromkeys(self._parent)
        keys.update(dict.fromkeys(self._fresh))
        return (key for key in keys if self._entries(key))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _freeze(mapping: Lists) -> Mapping[str, tuple[Any, ...]]:
    return MappingProxyType({k: tuple(v) for k, v in mapping.items()})
