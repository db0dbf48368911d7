"""Looking statements up by id: the error for an id that names none, and the id -> rank
table whose lookups stay C-level (a miss raises the error instead of a bare KeyError).

>>> ranks = Ranks([(3, 0), (5, 1)], "f")
>>> ranks[5], sorted([5, 3], key=ranks.__getitem__)
(1, [3, 5])
>>> ranks[9]
Traceback (most recent call last):
...
nkigym_graph.ir.statement_ids.UnknownStatementError: no statement with id 9 in program 'f' \
(its statement ids lie between 3 and 5)
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from nkigym_graph.errors import NotFoundError


class UnknownStatementError(NotFoundError, IndexError):
    """A statement id that names no statement of the program. Also a ``KeyError`` and an
    ``IndexError``, which the queries raised before."""


def unknown_statement(node: object, program: str, ids: Collection[int]) -> UnknownStatementError:
    """The error for id ``node``, naming the range of ``ids``, the ids ``program`` has."""
    where = f"its statement ids lie between {min(ids)} and {max(ids)}" if ids else "it has no statements"
    return UnknownStatementError(f"no statement with id {node!r} in program {program!r} ({where})")


class Ranks(dict[int, int]):
    """Statement id -> a number ascending in program order (``Program.order_key``); a
    missing id raises ``UnknownStatementError`` (a hit is a plain dict lookup)."""

    __slots__ = ("program",)

    def __init__(self, ranks: Iterable[tuple[int, int]], program: str) -> None:
        super().__init__(ranks)
        self.program = program
        """The name of the program (of the lineage) the ids belong to."""

    def __missing__(self, node: int) -> int:
        raise unknown_statement(node, self.program, self.keys())
