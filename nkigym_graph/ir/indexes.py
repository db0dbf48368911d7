"""Graph-database-style indexes of a program, built once in one pass.

Transforms ask these instead of scanning: statements by op, loads by source tensor,
consumers and writers of a variable.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from nkigym_graph.ir.statement import StatementsById

if TYPE_CHECKING:
    from nkigym_graph.ir.derivation import Derivation

Lists = dict[str, list[Any]]
"""A lookup while it is built: key -> entries."""


@dataclass(frozen=True)
class ProgramIndex:
    """Lookups over a program's statements (entries are statement ids, in program order)."""

    by_op: Mapping[str, tuple[int, ...]]
    loads_by_source: Mapping[str, tuple[int, ...]]
    consumers: Mapping[str, tuple[tuple[int, int], ...]]
    """Variable -> ``(node, operand position)`` of every read."""
    writers: Mapping[str, tuple[int, ...]]

    @classmethod
    def build(cls, statements: StatementsById, nodes: Iterable[int]) -> ProgramIndex:
        """The index of the statements ``nodes`` (ids in program order)."""
        by_op, loads, consumers, writers = cls.build_partial(statements, nodes)
        return cls(
            by_op=_freeze(by_op),
            loads_by_source=_freeze(loads),
            consumers=_freeze(consumers),
            writers=_freeze(writers),
        )

    @staticmethod
    def build_partial(statements: StatementsById, nodes: Iterable[int]) -> tuple[Lists, Lists, Lists, Lists]:
        """The four lookups (as lists) over the statements ``nodes`` (in program order)."""
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
        cls,
        parent: ProgramIndex,
        before: StatementsById,
        statements: StatementsById,
        derivation: Derivation,
        order_key: Callable[[int], int],
    ) -> ProgramIndex:
        """The index of a derived snapshot (``statements``) from its parent's (``before``
        names the parent's statements): each lookup is the parent's with the entries of
        the removed and changed statements taken out and those of the changed statements
        put in, worked out per key on first use. Ids do not move, so a key no edited
        statement mentions keeps the parent's entries as they are, and an edited key's
        entries are a copy with a few entries taken out and put in by bisection."""
        stale = derivation.changed | derivation.removed
        gone = cls.build_partial(before, sorted(stale, key=order_key))
        fresh = cls.build_partial(statements, sorted(derivation.changed, key=order_key))
        return cls(
            *(
                DerivedLookup(old, out, new, order_key, pairs=name == "consumers")
                for name, old, out, new in zip(
                    ("by_op", "loads_by_source", "consumers", "writers"),
                    (parent.by_op, parent.loads_by_source, parent.consumers, parent.writers),
                    gone,
                    fresh,
                    strict=True,
                )
            )
        )


_MISSING: tuple[Any, ...] = ()


class DerivedLookup(Mapping[str, tuple[Any, ...]]):
    """A lookup of a derived snapshot, from its parent's (see ``ProgramIndex.derived``).

    Entries are ids (or ``(id, operand)`` pairs when ``pairs``), in program order; a
    key's entries are the parent's without ``gone`` (the entries the removed and changed
    statements had) and with ``fresh`` (the changed statements' own entries).
    """

    __slots__ = ("_fresh", "_gone", "_keys", "_memo", "_order_key", "_pairs", "_parent")

    def __init__(
        self,
        parent: Mapping[str, tuple[Any, ...]],
        gone: Lists,
        fresh: Lists,
        order_key: Callable[[int], int],
        pairs: bool,
    ) -> None:
        self._parent = parent
        self._gone = gone
        self._fresh = fresh
        self._order_key = order_key
        self._pairs = pairs
        self._memo: dict[str, tuple[Any, ...]] = {}
        self._keys: tuple[str, ...] | None = None
        """The keys with entries, once iterated (a chain of derived lookups iterates its
        ancestors' keys otherwise)."""

    def _entries(self, key: str) -> tuple[Any, ...]:
        found = self._memo.get(key)
        if found is None:
            old = self._parent.get(key, _MISSING)
            gone, extra = self._gone.get(key), self._fresh.get(key)
            if not gone and not extra:
                found = old
            else:
                rank = self._order_key
                place: Callable[[Any], Any] = (lambda pair: (rank(pair[0]), pair[1])) if self._pairs else rank
                kept = list(old)
                for entry in gone or ():
                    at = bisect_left(kept, place(entry), key=place)
                    assert kept[at] == entry, "an index entry of the parent is missing"
                    del kept[at]
                for entry in extra or ():
                    insort(kept, entry, key=place)
                found = tuple(kept)
            self._memo[key] = found
        return found

    def __getitem__(self, key: str) -> tuple[Any, ...]:
        found = self._entries(key)
        if not found:
            raise KeyError(key)
        return found

    def get(self, key: str, default: Any = None) -> Any:
        return self._entries(key) or default

    def _listed(self) -> tuple[str, ...]:
        if self._keys is None:
            keys = dict.fromkeys(self._parent)
            keys.update(dict.fromkeys(self._fresh))
            self._keys = tuple(key for key in keys if self._entries(key))
        return self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._listed())

    def __len__(self) -> int:
        return len(self._listed())


def _freeze(mapping: Lists) -> Mapping[str, tuple[Any, ...]]:
    return MappingProxyType({k: tuple(v) for k, v in mapping.items()})
