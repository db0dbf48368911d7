"""The price tables: every statement's price kept by node key (``PriceTable``), so a
program prices only the statements it does not share with one already priced, and a
bounded memo of tables by program signature (``PriceMemo``)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Hashable, Sequence
from itertools import compress, islice, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.variables import INTERMEDIATE

if TYPE_CHECKING:
    pass

from .pricing import Price, Pricing, in_context, price


class Survey(NamedTuple):
    """What ``estimate`` needs from a program's variable table."""

    signature: tuple[str, ...]
    """Target and HBM tensors (name, kind, dtype): with a node key, it fixes a price."""
    tiles: list[str]
    """Every on-chip intermediate."""
    starts: list[int]
    """The statement defining each of ``tiles``."""


def survey(program: Program) -> Survey:
    """The ``Survey`` of ``program``."""
    infos = program.variables.values()
    on_chip = [info.kind == INTERMEDIATE for info in infos]
    hbm = list(compress(infos, map(operator.not_, on_chip)))
    signature = (program.target.name, *sorted(f"{v.name}:{v.kind}:{v.dtype}" for v in hbm))
    return Survey(
        signature,
        list(compress(map(NAME, infos), on_chip)),
        list(compress(map(DEFINED_BY, infos), on_chip)),
    )


NAME, DEFINED_BY = itemgetter(0), itemgetter(4)
"""Columns of a ``Variable``."""


class Columns(NamedTuple):
    """A ``PriceTable``'s numbers, one entry per row, as arrays (gathered per statement)."""

    queue: np.ndarray
    """Index of the engine in ``PriceTable.engines`` (0: none)."""
    seconds: np.ndarray
    flops: np.ndarray
    bytes: np.ndarray
    tile_bytes: np.ndarray
    buffer: np.ndarray
    """Index of the buffer in ``PriceTable.buffers``."""
    evicts: np.ndarray
    """Whether the row lists evictions."""


class PriceTable:
    """Prices of the statements of programs of one signature (``Survey``): each distinct
    price is a row (a tiled program repeats a few), found by node key (the op,
    attributes, slices and, through its producers, operand dtypes and the statement's
    ancestry) and computed by shape (``Pricing.shape``: all a price out of context
    depends on). Search states share most statements, so a state prices only its new
    node keys; the rest is array gathers over the rows."""

    def __init__(self) -> None:
        self.row_of_key: dict[str, int] = {}
        self.by_shape: dict[Hashable, Price] = {}
        self.prices: list[Price] = []
        """Row -> price."""
        self.engines: list[str] = [""]
        self.buffers: list[str] = []
        self._row_of_price: dict[Price, int] = {}
        self._columns: Columns | None = None

    def rows(self, program: Program, start: int = 0, prefix: np.ndarray | None = None) -> np.ndarray:
        """The row of every statement of ``program`` (per position), pricing the new
        ones; with ``prefix``, the rows of a program whose statements before position
        ``start`` have this one's node keys, those of the statements before ``start``."""
        keys = map(program.node_keys.__getitem__, program.ids)
        get = self.row_of_key.get
        n = len(program.ids)
        if prefix is None or not start:
            rows = np.fromiter(map(get, keys, repeat(-1)), dtype=np.int64, count=n)
        else:
            rows = np.empty(n, dtype=np.int64)
            rows[:start] = prefix[:start]
            rows[start:] = np.fromiter(
                map(get, islice(keys, start, None), repeat(-1)), dtype=np.int64, count=n - start
            )
        missing = np.flatnonzero(rows < 0).tolist()
        if missing:
            row_of = self._pricer(program, rows)
            for node in missing:
                rows[node] = row_of(node)
        return rows

    def derived_rows(
        self,
        program: Program,
        parent: Program,
        parent_rows: np.ndarray,
        gone: Sequence[int],
        dirty: Sequence[int],
    ) -> np.ndarray | None:
        """The rows of a program derived from ``parent``, whose rows are ``parent_rows``
        (per position; ``gone``: the ascending positions of the removed statements
        there), looking up (and pricing) only its ``dirty`` statements (positions,
        ascending), or None when that does not suffice (``Trn2CostModel`` guards the
        rest). A statement that is not dirty is the parent's with the same operands and
        edges; its price differs from the parent's only through its context, that is
        through whether a statement it depends on follows Tensor Engine work
        (``in_context``): so while every dirty statement agrees with its parent's on
        that, all the others keep their rows."""
        rows = np.delete(parent_rows, gone) if gone else parent_rows.copy()
        keys, get, prices, ids = program.node_keys, self.row_of_key.get, self.prices, program.ids
        row_of: Callable[[int], int] | None = None
        for at in dirty:
            node = ids[at]
            row = get(keys[node])
            if row is None:
                row_of = row_of or self._pricer(program, rows)
                row = row_of(at)
            if prices[row].after_tensor != prices[parent_rows[parent.position(node)]].after_tensor:
                return None
            rows[at] = row
        return rows

    def _pricer(self, program: Program, rows: np.ndarray) -> Callable[[int], int]:
        """Prices statements of ``program`` in order: the row of the statement at a
        position (the rows of those before it are ``rows``, per position), kept under its
        node key."""
        pricing = Pricing(program)
        prices, by_shape, row_of_key = self.prices, self.by_shape, self.row_of_key
        statements, keys, ids, position = program.statements, program.node_keys, program.ids, program.position

        def priced(src: int) -> Price:
            return prices[rows[position(src)]]

        def row_of(at: int) -> int:
            stmt = statements[at]
            shape = pricing.shape(stmt)
            base = by_shape.get(shape)
            if base is None:
                base = by_shape[shape] = price(stmt, pricing)
            row = row_of_key[keys[ids[at]]] = self._row(in_context(base, program, ids[at], priced))
            return row

        return row_of

    def queue_of(self, engine: str) -> int:
        """The index of ``engine`` in ``engines`` (added if no price runs on it yet: the
        engine of a task inserted before a statement)."""
        if engine not in self.engines:
            self.engines.append(engine)
        return self.engines.index(engine)

    def _row(self, found: Price) -> int:
        row = self._row_of_price.get(found)
        if row is None:
            row = self._row_of_price[found] = len(self.prices)
            self.prices.append(found)
            self._columns = None
        return row

    @property
    def columns(self) -> Columns:
        """The rows' numbers as arrays."""
        if self._columns is None:
            prices = self.prices
            for p in prices:
                for names, name in ((self.engines, p.engine), (self.buffers, p.buffer)):
                    if name not in names:
                        names.append(name)
            self._columns = Columns(
                np.array([self.engines.index(p.engine) for p in prices], dtype=np.int64),
                np.array([p.seconds for p in prices], dtype=np.float64),
                np.array([p.flops for p in prices], dtype=np.int64),
                np.array([p.bytes for p in prices], dtype=np.int64),
                np.array([p.tile_bytes for p in prices], dtype=np.int64),
                np.array([self.buffers.index(p.buffer) for p in prices], dtype=np.int64),
                np.array([bool(p.evictions) for p in prices], dtype=bool),
            )
        return self._columns


_PRICE_CACHE_LIMIT = 200_000
"""Node keys a cost model keeps prices of (all are dropped past this)."""


class PriceMemo:
    """A ``PriceTable`` per signature, dropped whole when they hold too many keys."""

    def __init__(self, limit: int = _PRICE_CACHE_LIMIT) -> None:
        self.limit = limit
        self.tables: dict[tuple[str, ...], PriceTable] = {}

    def table(self, signature: tuple[str, ...]) -> PriceTable:
        """The table of programs of ``signature``."""
        if sum(len(t.row_of_key) for t in self.tables.values()) > self.limit:
            self.tables.clear()
        found = self.tables.get(signature)
        if found is None:
            found = self.tables[signature] = PriceTable()
        return found
