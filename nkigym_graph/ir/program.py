"""The program: an immutable, verified DAG snapshot.

A ``Program`` holds its name, parameters (HBM inputs), statements in program order,
the returned variables and the target. Building one classifies the variables, derives
the dependency edges, verifies every rule of ``nkigym_graph.ir.verify`` and freezes a
``networkx.DiGraph`` whose nodes are statement positions carrying the frozen
``Statement`` (attribute ``stmt``) and whose edges carry the data ``uses``
(variable, operand position, slices) and ``order`` (variables ordering two writes, or
a read and a later write). Nothing about a snapshot can change; transforms build new
snapshots with ``replace``.

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
from collections.abc import Hashable, Iterable, Mapping, Sequence
from hashlib import blake2b
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import networkx as nx

from nkigym_graph.errors import VerificationError
from nkigym_graph.ir.canonical_hash import derived_node_keys, node_keys, program_key
from nkigym_graph.ir.capacity import check_capacity
from nkigym_graph.ir.collector import collector_paused
from nkigym_graph.ir.dependencies import Use, build_dependencies
from nkigym_graph.ir.graph_build import frozen_digraph
from nkigym_graph.ir.indexes import ProgramIndex
from nkigym_graph.ir.program_arguments import check_header, params_of, returns_of, statements_of
from nkigym_graph.ir.schedule import Schedule, ScheduleError
from nkigym_graph.ir.statement import Statement
from nkigym_graph.ir.targets import TRN2, Target, resolve_target
from nkigym_graph.ir.variables import Param, Variable, build_variables
from nkigym_graph.ir.verify import check_dependencies, check_returns, check_statements

if TYPE_CHECKING:
    from nkigym_graph.ir.derivation import Derivation


class Program:
    """An immutable, verified tiled program (see the module docstring)."""

    __slots__ = (
        "__weakref__",
        "_data_in",
        "_derivation",
        "_graph",
        "_hash",
        "_index",
        "_keys",
        "_memo",
        "_order_in",
        "_pred",
        "_structure_hash",
        "explicit_slices",
        "fragment",
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
    _graph: nx.DiGraph | None
    _data_in: Sequence[tuple[tuple[int, Use], ...]]
    """Per node, its data edges ``(source node, use)``."""
    _order_in: Sequence[tuple[tuple[int, str], ...]]
    """Per node, its ordering edges ``(earlier node, variable)`` (also where a data edge exists)."""
    _pred: dict[int, tuple[int, ...]]
    _memo: dict[Hashable, Any]
    _derivation: Derivation | None
    _index: ProgramIndex | None
    _keys: tuple[str, ...] | None
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
            self._build(name, params, statements, returns, target, outputs, fragment, explicit_slices)
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
    ) -> None:
        put = object.__setattr__
        check_header(name, fragment, explicit_slices)
        stmts = statements_of(statements)
        put(self, "name", name)
        put(self, "params", params_of(params, "params"))
        put(self, "statements", stmts)
        put(self, "returns", returns_of(returns))
        put(self, "target", resolve_target(target))
        put(self, "outputs", params_of(outputs, "outputs"))
        put(self, "fragment", fragment)
        put(self, "explicit_slices", explicit_slices)
        self._init_caches(None)
        put(self, "variables", MappingProxyType({}))

        write_counts: dict[str, int] = {}
        variables = build_variables(self.params, self.outputs, stmts, self.describe, write_counts)
        put(self, "variables", MappingProxyType(variables))
        check_statements(stmts, variables, self.target, self.describe)
        check_capacity(stmts, variables, self.target, self.describe)
        deps = build_dependencies(stmts, write_counts)
        check_dependencies(stmts, variables, deps, self.describe)
        check_returns(self.returns, variables, set(write_counts))
        n = len(stmts)
        data_in: list[tuple[tuple[int, Use], ...]] = [()] * n
        for node, found in deps.data.items():
            data_in[node] = tuple(found)
        order_in: list[tuple[tuple[int, str], ...]] = [()] * n
        for node, ordered in deps.order.items():
            order_in[node] = tuple(dict.fromkeys(ordered))
        put(self, "_data_in", data_in)
        put(self, "_order_in", order_in)

    def _init_caches(self, derivation: Derivation | None) -> None:
        put = object.__setattr__
        for slot in ("_index", "_keys", "_hash", "_structure_hash", "_graph"):
            put(self, slot, None)
        put(self, "_pred", {})
        put(self, "_memo", {})
        put(self, "_derivation", derivation)

    @classmethod
    def _assemble(
        cls,
        like: Program,
        statements: tuple[Statement, ...],
        variables: Mapping[str, Variable],
        data_in: Sequence[tuple[tuple[int, Use], ...]],
        order_in: Sequence[tuple[tuple[int, str], ...]],
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
        put(self, "variables", MappingProxyType(variables))
        put(self, "_data_in", data_in)
        put(self, "_order_in", order_in)
        self._init_caches(derivation)
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
                self.target.name,
                self.outputs,
                self.fragment,
                self.explicit_slices,
                None if self.schedule is None else str(self.schedule),
            ),
        )

    def replace(self, **changes: Any) -> Program:
        """A new verified snapshot with some fields changed (``statements=...`` usually)."""
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
        return Program(
            fields.pop("name"),
            fields.pop("params"),
            fields.pop("statements"),
            fields.pop("returns"),
            **fields,
        )

    # -- identity ---------------------------------------------------------------------
    @property
    def node_keys(self) -> tuple[str, ...]:
        """Merkle key of each statement (see ``nkigym_graph.ir.canonical_hash``)."""
        if self._keys is None:
            derivation = self._derivation
            parent_keys = derivation.keys if derivation is not None else None
            if derivation is not None and parent_keys is not None:
                keys = derived_node_keys(
                    self.statements,
                    self.variables,
                    self._data_in,
                    self._order_in,
                    parent_keys,
                    derivation.old_of,
                    derivation.altered,
                    self._later_mentions,
                )
            else:
                keys = node_keys(self.statements, self.variables, self._data_in, self._order_in)
            object.__setattr__(self, "_keys", tuple(keys))
        assert self._keys is not None
        return self._keys

    def _later_mentions(self, node: int) -> list[int]:
        """Later statements that read what ``node`` writes or write what it mentions (a
        superset of its successors in the DAG)."""
        index = self.index
        stmt = self.statements[node]
        writes = {stmt.operands[p].var for p in stmt.op.write_positions}
        out: list[int] = []
        for var in {operand.var for operand in stmt.operands}:
            out.extend(n for n in index.writers.get(var, ()) if n > node)
            if var in writes:
                out.extend(n for n, _ in index.consumers.get(var, ()) if n > node)
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
            stmt = self.statements[node]
            return f"{stmt.op.name}({', '.join(str(o) for o in stmt.operands)})"

    # -- graph and queries ------------------------------------------------------------
    @property
    def graph(self) -> nx.DiGraph:
        """The frozen dependency DAG (nodes: statement positions; built on first use)."""
        if self._graph is None:
            object.__setattr__(self, "_graph", self._build_graph())
        assert self._graph is not None
        return self._graph

    def _build_graph(self) -> nx.DiGraph:
        edges: dict[tuple[int, int], dict[str, Any]] = {}
        for dst, incoming in enumerate(self._data_in):
            for src, use in incoming:
                attrs = edges.get((src, dst))
                if attrs is None:
                    edges[(src, dst)] = {"uses": [use], "order": ()}
                else:
                    attrs["uses"].append(use)
        for attrs in edges.values():
            attrs["uses"] = tuple(attrs["uses"])
        for dst, ordered in enumerate(self._order_in):
            later: dict[int, set[str]] = {}
            for src, var in ordered:
                if (src, dst) not in edges:
                    later.setdefault(src, set()).add(var)
            for src, found in later.items():
                edges[(src, dst)] = {"uses": (), "order": tuple(sorted(found))}
        return frozen_digraph(
            [{"stmt": stmt} for stmt in self.statements], ((u, v, a) for (u, v), a in edges.items())
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
        """Lookups built once on first use (shifted from the parent's when derived)."""
        if self._index is None:
            derivation = self._derivation
            parent = derivation.parent() if derivation is not None else None
            if derivation is not None and parent is not None and parent._index is not None:
                index = ProgramIndex.derived(parent._index, self.statements, derivation)
            else:
                index = ProgramIndex.build(self.statements)
            object.__setattr__(self, "_index", index)
        assert self._index is not None
        return self._index

    def __len__(self) -> int:
        return len(self.statements)

    def __getitem__(self, node: int) -> Statement:
        return self.statements[node]

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

    def producers(self, node: int) -> tuple[tuple[int, int], ...]:
        """``(source node, operand position)`` of the data ``node`` reads."""
        return tuple((src, use.position) for src, use in self._data_in[node])

    def uses(self, src: int, dst: int) -> tuple[Use, ...]:
        """The data ``dst`` reads from ``src`` (empty for a pure ordering edge)."""
        return tuple(use for s, use in self._data_in[dst] if s == src)

    @property
    def incoming(self) -> tuple[Sequence[tuple[tuple[int, Use], ...]], Sequence[tuple[tuple[int, str], ...]]]:
        """Per statement, its incoming data edges ``(source, use)`` and ordering edges
        ``(source, variable)`` (an ordering edge may repeat a data edge's source): the
        snapshot's own lists, for whole-program passes that need sources only."""
        return self._data_in, self._order_in

    def pred_of(self, node: int) -> tuple[int, ...]:
        """Every node ``node`` depends on directly (data or ordering), ascending."""
        found = self._pred.get(node)
        if found is None:
            found = self._pred[node] = tuple(
                sorted({src for src, _ in self._data_in[node]} | {src for src, _ in self._order_in[node]})
            )
        return found

    def predecessors(self, node: int) -> list[int]:
        """All nodes with an edge into ``node``."""
        return list(self.pred_of(node))

    def successors(self, node: int) -> list[int]:
        """All nodes with an edge from ``node``."""
        return list(self.graph.successors(node))

    def reaches(self, a: int, b: int) -> bool:
        """Whether a path of dependencies leads from ``a`` to ``b``.

        Edges point forward in statement order, so the search walks back from ``b``
        through its ancestors and never below ``a``: in a tiled program a statement's
        ancestors are few, while an early load's descendants can be most of the program.
        """
        if a == b:
            return True
        if a > b:
            return False
        pred_of = self.pred_of
        seen = {b}
        queue = deque([b])
        while queue:
            for prev in pred_of(queue.popleft()):
                if prev == a:
                    return True
                if prev > a and prev not in seen:
                    seen.add(prev)
                    queue.append(prev)
        return False

    def parameter(self, name: str) -> Param:
        """The parameter called ``name``."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

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
    target: str,
    outputs: Sequence[Param],
    fragment: bool,
    explicit_slices: bool,
    schedule: str | None = None,
) -> Program:
    return Program(
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


STATEMENTS_KEY = "statements"
"""``Program.memo`` keys ``(STATEMENTS_KEY, ...)`` hold values of the statements alone,
which a snapshot with another schedule shares (``with_schedule``)."""


def _of_statements(key: Hashable) -> bool:
    return isinstance(key, tuple) and bool(key) and key[0] == STATEMENTS_KEY


def checked_schedule(program: Program, schedule: Schedule | str) -> Schedule:
    """``schedule`` (or its text) checked against ``program``'s axes."""
    from nkigym_graph.ir.axes import program_axes

    if program.fragment:
        raise ScheduleError("a fragment (statements without def/return) is not a kernel and has no schedule")
    if isinstance(schedule, str):
        schedule = Schedule.parse(schedule)
    if not isinstance(schedule, Schedule):
        raise ScheduleError(f"schedule must be a Schedule or its text, got {type(schedule).__name__}")
    if schedule.axes:
        schedule.check_axes(program_axes(program).names)
    return schedule


def unchanged_derivation(parent: Program) -> Derivation:
    """The derivation of a snapshot with ``parent``'s statements (a schedule change)."""
    from nkigym_graph.ir.derivation import Derivation

    positions = range(len(parent.statements))
    empty: frozenset[int] = frozenset()
    return Derivation(
        weakref.ref(parent), positions, positions, (), empty, empty, empty, frozenset(), parent._keys
    )
