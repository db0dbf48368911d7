"""Equal patterns: statements of one op that compute the same value.

``EqualPattern("load")`` matches loads of the same region of the same source into tiles
of the same shape: two statements are equal when they have the same op, attributes and
operands, apart from the tile each one defines afresh (written there and nowhere else,
not returned), and every variable they read holds one value all along (an input nobody
writes, or a tile written once). The later one computes nothing new: ``dedupe``
absorbs it into the earlier and lets its readers read the earlier's tile.

``pairs`` gives each statement with the previous equal one (the unit a search steps
through: a batch of them halves the duplicates), ``runs`` each group of equal
statements whole (what saturation applies). Pairs come ordered by the variable the
statements read first (a load's source), then in program order. ``EqualMatches`` keeps
the groups in stable ids so that a derived snapshot regroups only the statements its
edit touched.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> program = tiled_matmul(128, 128, 256)  # two column blocks, each loading the same a
>>> [found.nodes for found in EqualPattern("load").pairs(program)]
[(1, 5)]
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from nkigym_graph.rewriting.analysis_cache import StableIds
from nkigym_graph.rewriting.patterns.tree import Found, Where

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

Key = tuple[Hashable, ...]
"""What equal statements share: op, attributes, the operands they read, the shape and
region of the tile they define."""
Spec = tuple[str, int, int]
"""A pair: ``(the variable both read first, later statement, earlier)``, in stable ids."""


class EqualPattern:
    """Statements of one op computing the same value (see the module docstring)."""

    __slots__ = ("attrs", "op", "where")

    def __init__(self, op_name: str | None = None, /, *, where: Where | None = None, **attrs: Any) -> None:
        self.op = op_name
        self.where = where
        self.attrs = attrs

    def key(self, program: Program, node: int) -> Key | None:
        """What ``node`` shares with the statements equal to it (None: it is no member)."""
        stmt = program.statements[node]
        if (self.op is not None and stmt.op.name != self.op) or stmt.accumulate or len(stmt.writes) != 1:
            return None
        for name, wanted in self.attrs.items():
            value = stmt.attr(name)
            if not (wanted(value) if callable(wanted) else value == wanted):
                return None
        dst = stmt.dst
        info = program.variables.get(dst.var)
        if (
            info is None
            or info.external
            or dst.var in program.returns
            or program.writers_of(dst.var) != (node,)
            or not all(_one_value(program, operand.var) for operand in stmt.reads)
        ):
            return None
        if self.where is not None and not self.where(program, node):
            return None
        return (stmt.op, stmt.attrs, stmt.reads, dst.slices, info.shape, info.dtype)

    def pairs(self, program: Program) -> list[Found]:
        """Each member with the previous equal one."""
        return EqualMatches.of(self, program).pairs()

    def runs(self, program: Program) -> list[Found]:
        """Each group of equal members, in program order."""
        return EqualMatches.of(self, program).runs()

    def __repr__(self) -> str:
        attrs = "".join(f", {k}={v!r}" for k, v in self.attrs.items())
        return f"EqualPattern({self.op!r}{attrs})"


def _one_value(program: Program, var: str) -> bool:
    """Whether ``var`` holds one value all along: an input nobody writes, or a tile
    written by one statement."""
    writers = program.writers_of(var)
    info = program.variables.get(var)
    return info is not None and (not writers if info.external else len(writers) == 1)


class EqualMatches(NamedTuple):
    """An equal pattern's groups in one snapshot, in stable ids (``derived`` updates them)."""

    pattern: EqualPattern
    program: Program
    ids: StableIds
    groups: Mapping[Key, tuple[int, ...]]
    """The members of each key with at least one member, ascending (stable ids)."""
    specs: list[Spec]
    """Sorted."""

    @classmethod
    def of(cls, pattern: EqualPattern, program: Program) -> EqualMatches:
        nodes = program.statements_of(pattern.op) if pattern.op is not None else range(len(program))
        groups = _grouped(pattern, program, nodes, lambda node: node)
        return cls(pattern, program, StableIds.of(program), groups, sorted(_specs(groups)))

    def derived(self, program: Program) -> EqualMatches | None:
        """The groups in ``program``, derived from ``self.program`` (None: it is not
        this snapshot's child): only the groups a dirty or removed statement was or is
        in are rebuilt."""
        derivation = program.derivation
        if derivation is None or derivation.parent() is not self.program:
            return None
        pattern, parent = self.pattern, self.program
        ids = self.ids.derived(derivation)
        dirty, base_of, here_of = derivation.dirty, ids.base_of, ids.here_of
        before = (*derivation.gone, *(derivation.old_of[n] for n in dirty))
        affected = {key for old in before if (key := pattern.key(parent, old)) is not None}
        joining = _grouped(pattern, program, sorted(dirty), lambda node: base_of[node])
        affected.update(joining)
        groups = {key: nodes for key, nodes in self.groups.items() if key not in affected}
        rebuilt: dict[Key, tuple[int, ...]] = {}
        for key in affected:
            kept = (n for n in self.groups.get(key, ()) if here_of[n] >= 0 and here_of[n] not in dirty)
            members = tuple(sorted({*kept, *joining.get(key, ())}))
            if members:
                rebuilt[key] = members
        groups.update(rebuilt)
        dropped = {n for key in affected for n in self.groups.get(key, ())}
        specs = [spec for spec in self.specs if spec[1] not in dropped]
        specs.extend(_specs(rebuilt))
        specs.sort()
        return EqualMatches(pattern, program, ids, groups, specs)

    def pair_specs(self) -> list[Spec]:
        return self.specs

    def found(self, spec: Spec) -> Found:
        here_of = self.ids.here_of
        earlier, later = here_of[spec[2]], here_of[spec[1]]
        return Found(earlier, (earlier, later), {})

    def pairs(self) -> list[Found]:
        return [self.found(spec) for spec in self.specs]

    def runs(self) -> list[Found]:
        here_of = self.ids.here_of
        firsts = sorted((here_of[nodes[0]], nodes) for nodes in self.groups.values() if len(nodes) > 1)
        return [Found(first, [here_of[n] for n in nodes], {}) for first, nodes in firsts]


def _grouped(
    pattern: EqualPattern, program: Program, nodes: Iterable[int], named: Any
) -> dict[Key, tuple[int, ...]]:
    """The members among ``nodes`` by key, each named by ``named(node)``, ascending."""
    found: dict[Key, list[int]] = {}
    for node in nodes:
        key = pattern.key(program, node)
        if key is not None:
            found.setdefault(key, []).append(named(node))
    return {key: tuple(sorted(members)) for key, members in found.items()}


def _specs(groups: Mapping[Key, tuple[int, ...]]) -> list[Spec]:
    out = []
    for key, nodes in groups.items():
        first_read = key[2][0].var if key[2] else ""
        out.extend((first_read, nodes[k], nodes[k - 1]) for k in range(1, len(nodes)))
    return out
