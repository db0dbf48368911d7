"""The transform protocol.

A transform has a ``name``, ``analyze(program) -> list[Match]`` and
``rewrite(program, match) -> Program``. A ``Match`` is a small frozen record: the
statements it ``changes`` (replaced or removed), those whose data it relies on
unchanged (``reads``), and the ``Edit`` that performs it. Subclasses of ``Transform``
only write ``analyze`` (building each match's edit against the analysed program);
``rewrite`` applies the edit and returns a new verified snapshot. Because every match
states what it touches, the driver can apply many non-conflicting matches of one
analysis at once (``nkigym_graph.rewriting.rewrite.apply_edits``) with a single rebuild.

Overlap policy: two matches conflict when one changes a statement the other changes
or reads; a batch keeps the first of conflicting matches (analysis order).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from nkigym_graph.errors import TransformError
from nkigym_graph.ir.schedule import Schedule
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.rewriting.transform_guard import guard_methods

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program
    from nkigym_graph.rewriting.analysis_cache import Analysis


class Rename(NamedTuple):
    """Read variable ``var`` instead, shifted by ``offset`` along dimension ``dim``."""

    var: str
    dim: int = 0
    offset: int = 0

    def apply(self, operand: Operand) -> Operand:
        """``operand`` renamed (and shifted)."""
        if not self.offset:
            return Operand(self.var, operand.slices)
        slices = operand.slices
        start, stop = slices[self.dim]
        moved = (start + self.offset, stop + self.offset)
        return Operand(self.var, (*slices[: self.dim], moved, *slices[self.dim + 1 :]))


@dataclass(frozen=True)
class Edit:
    """Statement-level changes to one program.

    ``replace[node]`` is the node's new statement; ``absorb[node] = keeper`` removes
    ``node``, whose work now happens in ``keeper`` (its dependencies move there);
    ``remove`` drops nodes outright (dead code); ``renames[var]`` redirects every
    other statement's use of ``var`` (statements this edit replaces or inserts are left
    as given); ``schedule`` (when not None) becomes the program's schedule
    (``Program.schedule``); ``insert[node]`` are new statements placed just before
    ``node`` (which stays, or is replaced), in the order given: each gets a fresh id,
    numbered in program order, so replaying the same edits gives the same ids.
    """

    replace: Mapping[int, Statement] = field(default_factory=dict)
    absorb: Mapping[int, int] = field(default_factory=dict)
    remove: frozenset[int] = frozenset()
    renames: Mapping[str, Rename] = field(default_factory=dict)
    schedule: Schedule | None = None
    insert: Mapping[int, tuple[Statement, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "replace", MappingProxyType(dict(self.replace)))
        object.__setattr__(self, "absorb", MappingProxyType(dict(self.absorb)))
        object.__setattr__(self, "remove", frozenset(self.remove))
        object.__setattr__(self, "renames", MappingProxyType(dict(self.renames)))
        inserted = {node: _statements(node, stmts) for node, stmts in dict(self.insert).items()}
        object.__setattr__(self, "insert", MappingProxyType({n: s for n, s in inserted.items() if s}))

    @property
    def changes(self) -> frozenset[int]:
        """Every node whose statement this edit replaces or deletes, or that it inserts
        statements before (another edit must not remove it)."""
        return frozenset(self.replace) | frozenset(self.absorb) | self.remove | frozenset(self.insert)

    def __or__(self, other: Edit) -> Edit:
        """Both edits as one (``replace(...) | insert_before(...)`` at one statement):
        they must not change, insert before or rename the same things twice."""
        if not isinstance(other, Edit):
            return NotImplemented
        mine = frozenset(self.replace) | frozenset(self.absorb) | self.remove
        theirs = frozenset(other.replace) | frozenset(other.absorb) | other.remove
        twice = sorted((mine & theirs) | (frozenset(self.insert) & frozenset(other.insert))) + sorted(
            set(self.renames) & set(other.renames)
        )
        if twice or (self.schedule is not None and other.schedule is not None):
            raise TransformError(f"Edit |: both edits change {twice or 'the schedule'}")
        return Edit(
            {**self.replace, **other.replace},
            {**self.absorb, **other.absorb},
            self.remove | other.remove,
            {**self.renames, **other.renames},
            self.schedule if self.schedule is not None else other.schedule,
            {**self.insert, **other.insert},
        )

    @property
    def inserted(self) -> tuple[Statement, ...]:
        """Every statement this edit inserts."""
        return tuple(stmt for stmts in self.insert.values() for stmt in stmts)

    def __reduce__(self) -> tuple[Any, ...]:
        # the read-only mappings do not pickle: rebuild from plain dicts (process pools)
        return (
            Edit,
            (
                dict(self.replace),
                dict(self.absorb),
                self.remove,
                dict(self.renames),
                self.schedule,
                dict(self.insert),
            ),
        )

    def __hash__(self) -> int:
        return hash(
            (
                tuple(sorted(self.replace.items())),
                tuple(sorted(self.absorb.items())),
                self.remove,
                tuple(sorted(self.renames.items())),
                self.schedule,
                tuple(sorted(self.insert.items())),
            )
        )


def _statements(node: int, stmts: Any) -> tuple[Statement, ...]:
    """``Edit.insert[node]`` as a tuple (one statement may be given as it is)."""
    if isinstance(stmts, Statement):
        return (stmts,)
    if isinstance(stmts, str | bytes) or not isinstance(stmts, tuple | list):
        raise TransformError(f"Edit: insert[{node}] must be a Statement or a list of them, got {stmts!r:.80}")
    return tuple(stmts)


class OriginHash:
    """``Match.program_hash``: set to a hash, or to the analysed program itself, whose
    canonical hash is then worked out when first read and kept instead of the program
    (saturation applies matches without ever hashing the programs in between; a search
    reads it as it applies a match, and a ``Step`` as it records one)."""

    _SLOT = "_found_in"

    @overload
    def __get__(self, match: None, owner: type | None = None) -> str: ...

    @overload
    def __get__(self, match: Match, owner: type | None = None) -> str: ...

    def __get__(self, match: Match | None, owner: type | None = None) -> str:
        if match is None:
            return ""  # the field's default
        found: str | Program = match.__dict__[self._SLOT]
        if not isinstance(found, str):
            found = match.__dict__[self._SLOT] = found.canonical_hash
        return found

    def __set__(self, match: Match, value: str | Program) -> None:
        match.__dict__[self._SLOT] = value  # by __init__ only: a Match is frozen


@dataclass(frozen=True)
class Match:
    """One rewrite opportunity found by ``transform`` in the program it analysed.

    ``nodes`` are the statements the match is about (e.g. the pair being merged), for
    display and for ``explain``; ``detail`` is a short human-readable description.
    ``program_hash`` may be given as the analysed program (see ``OriginHash``).
    """

    transform: str
    nodes: tuple[int, ...]
    edit: Edit
    reads: frozenset[int] = frozenset()
    mentions: frozenset[str] = frozenset()
    """Variables of the statements the edit replaces (another match must not rename them)."""
    detail: str = ""
    program_hash: OriginHash = OriginHash()
    """Canonical hash of the analysed program: a match applies to that program only."""

    def __getstate__(self) -> dict[str, Any]:
        # a pickled match carries its origin's hash, never the program
        return {**self.__dict__, OriginHash._SLOT: self.program_hash}

    @property
    def changes(self) -> frozenset[int]:
        """Statements this match replaces or deletes."""
        return self.edit.changes

    @property
    def renamed(self) -> frozenset[str]:
        """Variables this match redirects."""
        return frozenset(self.edit.renames)

    def conflicts_with(self, other: Match) -> bool:
        """Whether applying both in one batch could interfere."""
        mine, theirs = self.changes, other.changes
        return bool(
            mine & theirs
            or mine & other.reads
            or theirs & self.reads
            or self.renamed & (other.renamed | other.mentions)
            or other.renamed & self.mentions
            or (self.edit.schedule is not None and other.edit.schedule is not None)
        )

    def __str__(self) -> str:
        text = f"{self.transform}{list(self.nodes)}"
        return f"{text}: {self.detail}" if self.detail else text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly summary (for search paths and logs)."""
        return {"transform": self.transform, "nodes": list(self.nodes), "detail": self.detail}


class Transform:
    """Base class for transforms: subclasses set ``name`` and implement ``analyze``."""

    name: str = ""
    batched: bool = True
    """Whether saturation may apply many matches of one analysis as one batch of edits.
    A transform whose ``rewrite`` does more than its edit (e.g. changes the parameters)
    sets False and is applied one ``rewrite`` at a time."""
    saturates: bool = True
    """Whether applying it until no match is left makes sense. A transform whose matches
    are alternatives (a schedule choice: every loop order is a match) sets False, and
    ``saturate`` refuses it: such choices are made by ``search``."""

    def analyze(self, program: Program) -> list[Match]:
        """Every opportunity in ``program`` (frozen matches, each with its edit)."""
        raise NotImplementedError

    def analysis(self, program: Program) -> Analysis:
        """The analysis ``matches_of`` caches: ``analyze``'s matches, and any state
        ``reanalysis`` needs. Transforms that update incrementally override both."""
        from nkigym_graph.rewriting.analysis_cache import Analysis

        return Analysis(tuple(self.analyze(program)))

    def reanalysis(self, program: Program, previous: Analysis) -> Analysis | None:
        """``program``'s analysis from its parent's (``previous``; see
        ``Program.derivation``), or None to analyse in full (the default). Must give
        the same matches, in the same order, as ``analyze``. Statements keep their ids
        across the derivation: records of statements neither dirty nor removed hold."""
        return None

    def analyze_batch(self, program: Program) -> list[Match]:
        """Matches for saturation: may be coarser than ``analyze`` (one match doing what
        several of ``analyze``'s would), never different in effect. Default: ``analyze``."""
        return self.analyze(program)

    def rewrite(self, program: Program, match: Match) -> Program:
        """Apply one match, returning a new verified snapshot (the input is untouched)."""
        from nkigym_graph.rewriting.rewrite import apply_edits

        self.check_origin(program, match)
        return apply_edits(program, [match.edit], transform=self.name)

    def check_origin(self, program: Program, match: Match) -> None:
        """Refuse a match found in another program."""
        if match.program_hash and match.program_hash != program.canonical_hash:
            raise TransformError(
                f"{self.name}: match {match} was found in another program "
                f"({match.program_hash[:12]}), not in this one ({program.canonical_hash[:12]})"
            )

    def explain(self, program: Program, *nodes: int) -> str:
        """Why ``nodes`` form a match or not (transforms override with specifics)."""
        for match in self.analyze(program):
            if set(match.nodes) == set(nodes):
                return f"match: {match.detail or match}"
        return f"{self.name}: statements {list(nodes)} do not form a match"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        guard_methods(cls)

    def __repr__(self) -> str:
        return f"<transform {self.name}>"


guard_methods(Transform)
