"""The program: an immutable, verified DAG snapshot.

A ``Program`` holds its name, parameters (HBM inputs), statements in program order,
the returned variables and the target. Building one classifies the variables, derives
the dependency edges, verifies every rule of ``nkigym_graph.ir.verify`` and freezes a
``networkx.DiGraph`` whose nodes are statement ids carrying the frozen ``Statement``
(attribute ``stmt``) and whose edges carry the data ``uses`` (variable, operand
position, slices) and ``order`` (variables ordering two writes, or a read and a later
write). Nothing about a snapshot can change; transforms build new snapshots with
``replace``.

A statement's *id* names it for as long as it lives: a freshly built program numbers
its statements ``0 .. n-1`` in program order, and a snapshot derived by a rewrite
keeps the ids of the statements it keeps or edits (the ones it removes disappear), so
an id is not a position. ``ids`` lists them in program order (aligned with
``statements``); ``position(id)`` and ``order_key(id)`` place one; ``p[id]`` is its
statement. Every query speaks in ids.

>>> from nkigym_graph import parse_program
>>> p = parse_program('''
... def f(a):
...     output = nkigym.ndarray((128, 128), dtype=np.float32)
...     tensor_0 = a[0:128, 0:128]
...     tensor_1 = nkigym.activation(tensor_0, op="exp")
...     output[0:128, 0:128] = tensor_1
...     return output
... ''')
>>> len(p), p.statements_of("load"), p.consumers_of("tensor_0")
(4, (1,), ((2, 0),))
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from hashlib import blake2b
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import networkx as nx

from nkigym_graph.errors import NotFoundError, VerificationError
from nkigym_graph.ir.canonical_hash import derived_node_keys, key_sum, node_keys, program_key
from nkigym_graph.ir.capacity import check_capacity
from nkigym_graph.ir.collector import collector_paused
from nkigym_graph.ir.dependencies import Use, build_dependencies
from nkigym_graph.ir.graph_build import frozen_digraph
from nkigym_graph.ir.indexes import ProgramIndex
from nkigym_graph.ir.positions import Positions, ShiftedPositions
from nkigym_graph.ir.program_arguments import check_header, params_of, returns_of, statements_of
from nkigym_graph.ir.schedule import Schedule, ScheduleError
from nkigym_graph.ir.statement import Statement
from nkigym_graph.ir.statement_ids import Ranks, UnknownStatementError, unknown_statement
from nkigym_graph.ir.targets import TRN2, Target, resolve_target
from nkigym_graph.ir.variables import Param, Variable, build_variables
from nkigym_graph.ir.verify import check_dependencies, check_returns, check_statements, stored

if TYPE_CHECKING:
    from nkigym_graph.ir.derivation import Derivation


class UnknownParameterError(NotFoundError):
    """``Program.parameter`` of a name that is no parameter (also a ``KeyError``, which it
    raised before)."""


class Program:
    """An immutable, verified tiled program (see the module docstring)."""

    __slots__ = (
        "__weakref__",
        "_at",
        "_data_in",
        "_derivation",
        "_graph",
        "_hash",
        "_index",
        "_key_sum",
        "_keys",
        "_memo",
        "_next_id",
        "_order_in",
        "_pred",
        "_rank",
        "_structure_hash",
        "explicit_slices",
        "fragment",
        "ids",
        "name",
        "outputs",
        "params",
        "returns",
        "schedule",
        "statements",
        "target",
        "variables",
    )

    name: str
    params: tuple[Param, ...]
    statements: tuple[Statement, ...]
    returns: tuple[str, ...]
    target: Target
    outputs: tuple[Param, ...]
    """HBM outputs written without an ``alloc`` (fragments only)."""
    fragment: bool
    """A bare statement list (no ``def``/``return`` when printed)."""
    explicit_slices: bool
    """Printing style: slice whole on-chip tiles explicitly (``t[0:128, 0:128]``)."""
    schedule: Schedule | None
    """How a kernel runs the statements (``nkigym_graph.ir.schedule``); None: in program
    order, every tile its own buffer. Hashed with the program."""
    variables: Mapping[str, Variable]
    ids: tuple[int, ...]
    """The id of each statement, in program order (aligned with ``statements``)."""
    _rank: Ranks
    """Id -> a number ascending in program order (shared along derivations that keep the
    order, so it may hold ids of removed statements; ids are never reused). An unknown
    id raises ``UnknownStatementError``."""
    _at: Positions | None
    """Id -> position, built on first lookup (lookups by id are the hot path of every
    analysis: a dict beats a bisection); a large derived snapshot's first reads
    through its parent's (``nkigym_graph.ir.positions``)."""
    _next_id: int
    """The id the next new statement gets (above every id ever used on this lineage)."""
    _graph: nx.DiGraph | None
    _data_in: Mapping[int, tuple[tuple[int, Use], ...]]
    """Per node id, its data edges ``(source node, use)``."""
    _order_in: Mapping[int, tuple[tuple[int, str], ...]]
    """Per node id, its ordering edges ``(earlier node, variable)`` (also where a data edge exists)."""
    _pred: dict[int, tuple[int, ...]]
    _memo: dict[Hashable, Any]
    _derivation: Derivation | None
    _index: ProgramIndex | None
    _keys: Mapping[int, str] | None
    _key_sum: int
    _hash: str | None
    _structure_hash: str | None

    def __init__(
        self,
        name: str,
        params: Iterable[Param],
        statements: Iterable[Statement],
        returns: Iterable[str] | str,
        *,
        target: Target | str = TRN2,
        outputs: Iterable[Param] = (),
        fragment: bool = False,
        explicit_slices: bool = False,
        schedule: Schedule | str | None = None,
    ) -> None:
        with collector_paused():
            self._build(name, params, statements, returns, target, outputs, fragment, explicit_slices, None)
            object.__setattr__(self, "schedule", None)
            if schedule is not None:
                object.__setattr__(self, "schedule", checked_schedule(self, schedule))

    def _build(
        self,
        name: str,
        params: Iterable[Param],
        statements: Iterable[Statement],
        returns: Iterable[str] | str,
        target: Target | str,
        outputs: Iterable[Param],
        fragment: bool,
        explicit_slices: bool,
        ids: tuple[tuple[int, ...], int] | None,
        known: Callable[[int, Statement], bool] | None = None,
    ) -> None:
        """Build and verify; ``ids``: the statements' ids and the next id (default:
        ``0 .. n-1``, ``n``); ``known(position, statement)``: whether a statement comes
        from a verified program (its types need no check)."""
        put = object.__setattr__
        check_header(name, fragment, explicit_slices)
        stmts = statements_of(statements, known)
        put(self, "name", name)
        put(self, "params", params_of(params, "params"))
        put(self, "statements", stmts)
        put(self, "returns", returns_of(returns))
        put(self, "target", resolve_target(target))
        put(self, "outputs", params_of(outputs, "outputs"))
        put(self, "fragment", fragment)
        put(self, "explicit_slices", explicit_slices)
        n = len(stmts)
        id_of, next_id = (tuple(range(n)), n) if ids is None else ids
        put(self, "ids", id_of)
        rank = Ranks(zip(id_of, range(n), strict=True), name)
        put(self, "_rank", rank)
        put(self, "_next_id", next_id)
        self._init_caches(None)
        put(self, "_at", rank.copy())  # ranks are positions (a plain dict: the faster lookups)
        put(self, "variables", MappingProxyType({}))

        def describe(position: int) -> str:  # while building: variables defined by position
            return _describe_in(stmts, self.variables, explicit_slices, position)

        write_counts: dict[str, int] = {}
        variables = build_variables(self.params, self.outputs, stmts, describe, write_counts)
        put(self, "variables", MappingProxyType(variables))
        check_statements(stmts, variables, self.target, describe)
        check_capacity(stmts, variables, self.target, describe)
        deps = build_dependencies(stmts, write_counts)
        check_dependencies(stmts, variables, deps, describe)
        written = {var for var in self.returns if stored(var, write_counts.get(var, 0), variables)}
        check_returns(self.returns, variables, written)
        data_in: dict[int, tuple[tuple[int, Use], ...]] = dict.fromkeys(id_of, ())
        order_in: dict[int, tuple[tuple[int, str], ...]] = dict.fromkeys(id_of, ())
        if id_of != tuple(range(n)):  # built over positions, named by id
            for var, info in variables.items():
                if info.defined_by is not None:
                    variables[var] = info._replace(defined_by=id_of[info.defined_by])
            put(self, "variables", MappingProxyType(variables))
            for node, found in deps.data.items():
                data_in[id_of[node]] = tuple([(id_of[src], use) for src, use in found])
            for node, ordered in deps.order.items():
                order_in[id_of[node]] = tuple([(id_of[src], var) for src, var in dict.fromkeys(ordered)])
        else:
            for node, found in deps.data.items():
                data_in[node] = tuple(found)
            for node, ordered in deps.order.items():
                order_in[node] = tuple(dict.fromkeys(ordered))
        put(self, "_data_in", data_in)
        put(self, "_order_in", order_in)

    def _init_caches(self, derivation: Derivation | None) -> None:
        put = object.__setattr__
        for slot in ("_at", "_index", "_keys", "_hash", "_structure_hash", "_graph"):
            put(self, slot, None)
        put(self, "_key_sum", 0)
        put(self, "_pred", {})
        put(self, "_memo", {})
        put(self, "_derivation", derivation)

    @classmethod
    def _assemble(
        cls,
        like: Program,
        statements: tuple[Statement, ...],
        ids: tuple[int, ...],
        variables: Mapping[str, Variable],
        data_in: Mapping[int, tuple[tuple[int, Use], ...]],
        order_in: Mapping[int, tuple[tuple[int, str], ...]],
        derivation: Derivation,
    ) -> Program:
        """A snapshot with ``like``'s other fields from parts already verified
        (``nkigym_graph.ir.derivation`` builds them)."""
        self = object.__new__(cls)
        put = object.__setattr__
        for field in (
            "name",
            "params",
            "returns",
            "target",
            "outputs",
            "fragment",
            "explicit_slices",
            "schedule",
        ):
            put(self, field, getattr(like, field))
        put(self, "statements", statements)
        put(self, "ids", ids)
        put(self, "_rank", like._rank)
        put(self, "_next_id", like._next_id)
        put(self, "variables", MappingProxyType(variables))
        put(self, "_data_in", data_in)
        put(self, "_order_in", order_in)
        self._init_caches(derivation)
        if like.schedule is not None:  # a rewrite keeps what still fits
            from nkigym_graph.ir.schedule_fit import fitted

            put(self, "schedule", fitted(self, like.schedule))
        return self

    # -- immutability -----------------------------------------------------------------
    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"Program is immutable: cannot set {key!r}; use replace()")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"Program is immutable: cannot delete {key!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild,
            (
                self.name,
                self.params,
                self.statements,
                self.returns,
                self.target,
                self.outputs,
                self.fragment,
                self.explicit_slices,
                None if self.schedule is None else str(self.schedule),
                *(() if self._numbered_from_zero() else (self.ids, self._next_id)),
            ),
        )

    def _numbered_from_zero(self) -> bool:
        """Whether the ids are ``0 .. n-1`` and no other id was ever used (a fresh build
        numbers its statements so; a pickle need not carry the ids then)."""
        return self._next_id == len(self.ids) and self.ids == tuple(range(len(self.ids)))

    def replace(self, **changes: Any) -> Program:
        """A new verified snapshot with some fields changed (``statements=...`` usually).
        A schedule given is checked as ``with_schedule`` checks it; one kept loses what no
        longer fits the new statements, as in a rewrite."""
        fields: dict[str, Any] = {
            "name": self.name,
            "params": self.params,
            "statements": self.statements,
            "returns": self.returns,
            "target": self.target,
            "outputs": self.outputs,
            "fragment": self.fragment,
            "explicit_slices": self.explicit_slices,
            "schedule": self.schedule,
        }
        unknown = set(changes) - set(fields)
        if unknown:
            raise VerificationError("argument", f"replace: Program has no field(s) {sorted(unknown)}")
        fields.update(changes)
        kept = None if "schedule" in changes else fields.pop("schedule")
        program = Program(
            fields.pop("name"),
            fields.pop("params"),
            fields.pop("statements"),
            fields.pop("returns"),
            **fields,
        )
        if kept is not None:
            object.__setattr__(program, "schedule", checked_schedule(program, kept, given=False))
        return program

    def rebuilt(self, statements: Iterable[Statement], ids: Iterable[int]) -> Program:
        """A new snapshot built in full (verified like ``replace``) with ``statements``
        in this order, named ``ids``: the ids of this program's statements they keep or
        edit, or -1 for a new statement (it gets a fresh id)."""
        ids = list(ids)
        next_id = max(self._next_id, max(ids, default=-1) + 1)
        named: list[int] = []
        for node in ids:
            if node < 0:
                node, next_id = next_id, next_id + 1
            named.append(node)
        statements = tuple(statements)
        if len(set(named)) != len(named) or len(named) != len(statements):
            raise VerificationError("argument", "rebuilt: one distinct id per statement")
        mine = self._positions()

        def known(position: int, stmt: Statement) -> bool:  # kept as it is: well typed
            at = mine.get(named[position])
            return at is not None and self.statements[at] is stmt

        program = object.__new__(Program)
        with collector_paused():
            program._build(
                self.name,
                self.params,
                statements,
                self.returns,
                self.target,
                self.outputs,
                self.fragment,
                self.explicit_slices,
                (tuple(named), next_id),
                known,
            )
            object.__setattr__(program, "schedule", None)
            if self.schedule is not None:
                kept = checked_schedule(program, self.schedule, given=False)
                object.__setattr__(program, "schedule", kept)
        return program

    # -- identity ---------------------------------------------------------------------
    @property
    def node_keys(self) -> Mapping[int, str]:
        """Merkle key of each statement by id, in program order (see
        ``nkigym_graph.ir.canonical_hash``)."""
        if self._keys is None:
            derivation = self._derivation
            parent_keys = derivation.keys if derivation is not None else None
            if derivation is not None and parent_keys is not None:
                keys, total = derived_node_keys(
                    self,
                    self.variables,
                    self._data_in,
                    self._order_in,
                    parent_keys,
                    derivation.removed,
                    derivation.altered,
                    self._later_mentions,
                    self.order_key,
                    derivation.key_sum,
                )
            else:
                keys = node_keys(self, self.variables, self._data_in, self._order_in, self.ids)
                total = key_sum(keys.values())
            object.__setattr__(self, "_key_sum", total)
            object.__setattr__(self, "_keys", keys)
        known = self._keys
        assert known is not None
        return MappingProxyType(known) if isinstance(known, dict) else known  # an overlay is read-only

    def _later_mentions(self, node: int) -> list[int]:
        """Later statements that read what ``node`` writes or write what it mentions (a
        superset of its successors in the DAG)."""
        index = self.index
        stmt = self[node]
        rank = self._rank
        here = rank[node]
        writes = {stmt.operands[p].var for p in stmt.op.write_positions}
        out: list[int] = []
        for var in {operand.var for operand in stmt.operands}:
            out.extend(n for n in index.writers.get(var, ()) if rank[n] > here)
            if var in writes:
                out.extend(n for n, _ in index.consumers.get(var, ()) if rank[n] > here)
        return out

    def with_schedule(self, schedule: Schedule | str | None) -> Program:
        """This program with another schedule: the same statements (every structure the
        snapshot built is shared), a different value and hash."""
        if schedule is not None:
            schedule = checked_schedule(self, schedule)
        if schedule == self.schedule:
            return self
        _ = self.structure_hash  # computed once here, shared by every twin
        twin = object.__new__(Program)
        for field in self.__slots__:
            if field != "__weakref__":
                object.__setattr__(twin, field, getattr(self, field))
        shared = {key: value for key, value in self._memo.items() if _of_statements(key)}
        object.__setattr__(twin, "_memo", shared)
        object.__setattr__(twin, "schedule", schedule)
        object.__setattr__(twin, "_hash", None)
        object.__setattr__(twin, "_derivation", unchanged_derivation(self))
        return twin

    @property
    def canonical_hash(self) -> str:
        """Hex digest, equal for programs equal up to intermediate names and the order
        of independent statements (and with the same schedule)."""
        if self._hash is None:
            structure = self.structure_hash
            key = structure
            if self.schedule is not None:
                key = blake2b(f"{structure}|schedule {self.schedule}".encode(), digest_size=20).hexdigest()
            object.__setattr__(self, "_hash", key)
        assert self._hash is not None
        return self._hash

    @property
    def structure_hash(self) -> str:
        """The canonical hash of the statements alone (the schedule aside): programs with
        equal structure hashes compute the same thing in the same way."""
        if self._structure_hash is None:
            key = program_key(
                self.target,
                self.params,
                self.outputs,
                self.returns,
                self.variables,
                self.node_keys,
                self.writers_of,
                self._key_sum,
            )
            object.__setattr__(self, "_structure_hash", key)
        assert self._structure_hash is not None
        return self._structure_hash

    def __eq__(self, other: object) -> bool:
        """Canonical equality: same hash (names of intermediates and independent order aside)."""
        if not isinstance(other, Program):
            return NotImplemented
        return self is other or self.canonical_hash == other.canonical_hash

    def __hash__(self) -> int:
        return hash(self.canonical_hash)

    # -- text -------------------------------------------------------------------------
    def to_source(self) -> str:
        """The program in the seeds' tiled-program text format."""
        from nkigym_graph.ir.printer import format_program

        return format_program(self)

    def __str__(self) -> str:
        return self.to_source()

    def __repr__(self) -> str:
        return (
            f"<Program {self.name} ({len(self.statements)} statements, "
            f"{self.target.name}) {self.canonical_hash[:12]}>"
        )

    def describe(self, node: int) -> str:
        """The text line of statement ``node`` (used in error messages)."""
        from nkigym_graph.ir.printer import format_statement

        try:
            return format_statement(self, node)
        except (IndexError, KeyError, TypeError):  # too malformed for its own syntax
            stmt = self[node]
            return f"{stmt.op.name}({', '.join(str(o) for o in stmt.operands)})"

    # -- graph and queries ------------------------------------------------------------
    @property
    def graph(self) -> nx.DiGraph:
        """The frozen dependency DAG (nodes: statement ids, added in program order; built
        on first use)."""
        if self._graph is None:
            object.__setattr__(self, "_graph", self._build_graph())
        assert self._graph is not None
        return self._graph

    def _build_graph(self) -> nx.DiGraph:
        edges: dict[tuple[int, int], dict[str, Any]] = {}
        for dst, incoming in self._data_in.items():
            for src, use in incoming:
                attrs = edges.get((src, dst))
                if attrs is None:
                    edges[(src, dst)] = {"uses": [use], "order": ()}
                else:
                    attrs["uses"].append(use)
        for attrs in edges.values():
            attrs["uses"] = tuple(attrs["uses"])
        for dst, ordered in self._order_in.items():
            later: dict[int, set[str]] = {}
            for src, var in ordered:
                if (src, dst) not in edges:
                    later.setdefault(src, set()).add(var)
            for src, found in later.items():
                edges[(src, dst)] = {"uses": (), "order": tuple(sorted(found))}
        return frozen_digraph(
            self.ids, [{"stmt": stmt} for stmt in self.statements], ((u, v, a) for (u, v), a in edges.items())
        )

    @property
    def memo(self) -> dict[Hashable, Any]:
        """A per-snapshot cache for the layers above the IR (the rewriting engine keeps
        its analyses here), each under keys of its own. The IR never reads it; it is
        neither compared, hashed nor pickled, and lives and dies with the snapshot."""
        return self._memo

    @property
    def derivation(self) -> Derivation | None:
        """How this snapshot was derived from its parent (None when built in full)."""
        return self._derivation

    @property
    def index(self) -> ProgramIndex:
        """Lookups built once on first use (from the parent's when derived)."""
        if self._index is None:
            derivation = self._derivation
            parent = derivation.parent() if derivation is not None else None
            if derivation is not None and parent is not None and parent._index is not None:
                index = ProgramIndex.derived(parent._index, parent, self, derivation, self.order_key)
            else:
                index = ProgramIndex.build(self, self.ids)
            object.__setattr__(self, "_index", index)
        assert self._index is not None
        return self._index

    def __len__(self) -> int:
        return len(self.statements)

    def _positions(self) -> Positions:
        at = self._at
        if at is None:
            at = self._shifted_positions() or self._position_dict()
            object.__setattr__(self, "_at", at)
        return at

    def _position_dict(self) -> dict[int, int]:
        at = self._derived_positions()
        if at is None:
            at = dict(zip(self.ids, range(len(self.ids)), strict=True))
        object.__setattr__(self, "_at", at)
        return at

    def _shifted_positions(self) -> ShiftedPositions | None:
        """The parent's table shifted (``nkigym_graph.ir.positions``), if the parent is
        alive and has one."""
        derivation = self._derivation
        parent = derivation.parent() if derivation is not None else None
        if derivation is None or parent is None or parent._at is None:
            return None
        me = weakref.ref(self)

        def built() -> Positions | None:
            program = me()
            return None if program is None else program._position_dict()

        return ShiftedPositions.of(parent._at, derivation.removed, built, len(self.ids))

    def _derived_positions(self) -> dict[int, int] | None:
        """The id -> position dict from the parent's, when the parent is alive and has
        built one: a derivation keeps the order, so only the statements after the first
        removed one move (None: build it in full)."""
        derivation = self._derivation
        if derivation is None:
            return None
        parent = derivation.parent()
        known = None if parent is None else parent._at
        if not isinstance(known, dict):
            return None
        removed = derivation.removed
        if not removed:
            return known  # the same ids in the same places (tables are never mutated)
        first = min(known[node] for node in removed)
        at = known.copy()
        for node in removed:
            del at[node]
        ids = self.ids
        at.update(zip(ids[first:], range(first, len(ids)), strict=True))
        return at

    def _unknown(self, node: object) -> UnknownStatementError:
        """The error for an id that names no statement of this program."""
        return unknown_statement(node, self.name, self.ids)

    def __getitem__(self, node: int) -> Statement:
        """The statement with id ``node``."""
        at = (self._at or self._positions()).get(node)
        if at is None:
            raise self._unknown(node)
        return self.statements[at]

    def __iter__(self) -> Iterator[Statement]:
        """The statements in program order."""
        return iter(self.statements)

    def __contains__(self, node: object) -> bool:
        """Whether a statement has id ``node``."""
        return isinstance(node, int) and node in (self._at or self._positions())

    def position(self, node: int) -> int:
        """Where statement ``node`` stands in program order (``statements[position]``)."""
        at = (self._at or self._positions()).get(node)
        if at is None:
            raise self._unknown(node)
        return at

    @property
    def order_key(self) -> Callable[[int], int]:
        """Statement id -> a number that orders ids as the program does (``sorted(nodes,
        key=program.order_key)``); not a position. A C-level lookup: cheap as a sort key
        (an unknown id raises ``UnknownStatementError``)."""
        return self._rank.__getitem__

    def in_order(self, nodes: Iterable[int]) -> list[int]:
        """``nodes`` (statement ids) sorted in program order."""
        return sorted(nodes, key=self._rank.__getitem__)

    def items(self) -> Iterator[tuple[int, Statement]]:
        """``(id, statement)`` in program order."""
        return zip(self.ids, self.statements, strict=True)

    def statements_of(self, op_name: str) -> tuple[int, ...]:
        """Nodes whose op is ``op_name``, in program order."""
        return self.index.by_op.get(op_name, ())

    def loads_of(self, source: str) -> tuple[int, ...]:
        """Load nodes reading parameter ``source``."""
        return self.index.loads_by_source.get(source, ())

    def consumers_of(self, var: str) -> tuple[tuple[int, int], ...]:
        """``(node, operand position)`` of every read of ``var``."""
        return self.index.consumers.get(var, ())

    def writers_of(self, var: str) -> tuple[int, ...]:
        """Nodes writing ``var``, in program order."""
        return self.index.writers.get(var, ())

    def definition_of(self, var: str) -> int | None:
        """The node that allocates or first writes ``var``."""
        info = self.variables.get(var)
        return None if info is None else info.defined_by

    def _data_into(self, node: int) -> tuple[tuple[int, Use], ...]:
        """The data edges into ``node``."""
        try:
            return self._data_in[node]
        except KeyError:
            raise self._unknown(node) from None

    def producers(self, node: int) -> tuple[tuple[int, int], ...]:
        """``(source node, operand position)`` of the data ``node`` reads."""
        return tuple((src, use.position) for src, use in self._data_into(node))

    def uses(self, src: int, dst: int) -> tuple[Use, ...]:
        """The data ``dst`` reads from ``src`` (empty for a pure ordering edge)."""
        self.position(src)  # an id of this program (else UnknownStatementError)
        return tuple(use for s, use in self._data_into(dst) if s == src)

    @property
    def incoming(
        self,
    ) -> tuple[Mapping[int, tuple[tuple[int, Use], ...]], Mapping[int, tuple[tuple[int, str], ...]]]:
        """Per statement id, its incoming data edges ``(source, use)`` and ordering edges
        ``(source, variable)`` (an ordering edge may repeat a data edge's source): read-only
        views of the snapshot's own tables, for whole-program passes that need sources only."""
        return MappingProxyType(self._data_in), MappingProxyType(self._order_in)

    def pred_of(self, node: int) -> tuple[int, ...]:
        """Every node ``node`` depends on directly (data or ordering), in program order."""
        found = self._pred.get(node)
        if found is None:
            try:
                data, order = self._data_in[node], self._order_in[node]
            except KeyError:
                raise self._unknown(node) from None
            found = self._pred[node] = tuple(
                sorted({src for src, _ in data} | {src for src, _ in order}, key=self._rank.__getitem__)
            )
        return found

    def predecessors(self, node: int) -> list[int]:
        """All nodes with an edge into ``node``."""
        return list(self.pred_of(node))

    def successors(self, node: int) -> list[int]:
        """All nodes with an edge from ``node``."""
        try:
            return list(self.graph.successors(node))
        except nx.NetworkXError:
            raise self._unknown(node) from None

    def reaches(self, a: int, b: int) -> bool:
        """Whether a path of dependencies leads from ``a`` to ``b``.

        Edges point forward in statement order, so the search walks back from ``b``
        through its ancestors and never below ``a``: in a tiled program a statement's
        ancestors are few, while an early load's descendants can be most of the program.
        """
        if a == b:
            self.position(a)  # an id of this program (else UnknownStatementError)
            return True
        rank = self._rank
        floor = rank[a]
        if floor > rank[b]:
            return False
        pred_of = self.pred_of
        seen = {b}
        queue = deque([b])
        while queue:
            for prev in pred_of(queue.popleft()):
                if prev == a:
                    return True
                if rank[prev] > floor and prev not in seen:
                    seen.add(prev)
                    queue.append(prev)
        return False

    def parameter(self, name: str) -> Param:
        """The parameter called ``name``."""
        for p in self.params:
            if p.name == name:
                return p
        names = ", ".join(p.name for p in self.params) or "none"
        raise UnknownParameterError(f"{self.name} has no parameter {name!r} (its parameters: {names})")

    @property
    def output_dtype(self) -> str:
        """dtype of the (first) returned tensor, float64 when the program does not say."""
        if not self.returns:
            return "float64"
        info = self.variables[self.returns[0]]
        return info.dtype or "float64"


def _rebuild(
    name: str,
    params: Sequence[Param],
    statements: Sequence[Statement],
    returns: Sequence[str],
    target: str | Target,
    outputs: Sequence[Param],
    fragment: bool,
    explicit_slices: bool,
    schedule: str | None = None,
    ids: tuple[int, ...] | None = None,
    next_id: int = 0,
) -> Program:
    """Unpickling: the program built in full again, under the same statement ids."""
    program = Program(
        name,
        params,
        statements,
        returns,
        target=target,
        outputs=outputs,
        fragment=fragment,
        explicit_slices=explicit_slices,
        schedule=schedule,
    )
    if ids is not None:
        program = program.rebuilt(program.statements, ids)
        object.__setattr__(program, "_next_id", max(program._next_id, next_id))
    return program


STATEMENTS_KEY = "statements"
"""``Program.memo`` keys ``(STATEMENTS_KEY, ...)`` hold values of the statements alone,
which a snapshot with another schedule shares (``with_schedule``)."""


def _of_statements(key: Hashable) -> bool:
    return isinstance(key, tuple) and bool(key) and key[0] == STATEMENTS_KEY


def checked_schedule(program: Program, schedule: Schedule | str, *, given: bool = True) -> Schedule:
    """``schedule`` (or its text) checked against ``program``'s axes and, when it is
    ``given`` to it, refused unless it fits it (``nkigym_graph.ir.schedule_fit``); a schedule
    a rewritten program keeps loses what no longer fits instead."""
    from nkigym_graph.ir.axes import program_axes
    from nkigym_graph.ir.schedule_fit import check_fit, fitted

    if program.fragment:
        raise ScheduleError("a fragment (statements without def/return) is not a kernel and has no schedule")
    if isinstance(schedule, str):
        schedule = Schedule.parse(schedule)
    if not isinstance(schedule, Schedule):
        raise ScheduleError(f"schedule must be a Schedule or its text, got {type(schedule).__name__}")
    if schedule.axes:
        schedule.check_axes(program_axes(program).names)
    if not given:
        return fitted(program, schedule)
    check_fit(program, schedule)
    return schedule


def unchanged_derivation(parent: Program) -> Derivation:
    """The derivation of a snapshot with ``parent``'s statements (a schedule change)."""
    from nkigym_graph.ir.derivation import Derivation

    empty: frozenset[int] = frozenset()
    known = parent._keys is not None
    return Derivation(
        weakref.ref(parent),
        empty,
        empty,
        empty,
        empty,
        frozenset(),
        parent._keys,
        parent._key_sum if known else 0,
    )


def _describe_in(
    statements: Sequence[Statement], variables: Mapping[str, Variable], explicit: bool, position: int
) -> str:
    """Statement ``position`` of ``statements`` for an error message while building."""
    from nkigym_graph.ir.printer import format_statement_in

    try:
        return format_statement_in(statements.__getitem__, variables, explicit, position)
    except (IndexError, KeyError, TypeError):  # too malformed for its own syntax
        stmt = statements[position]
        return f"{stmt.op.name}({', '.join(str(o) for o in stmt.operands)})"
