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
the groups so that a derived snapshot regroups only the statements its edit touched.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> program = tiled_matmul(128, 128, 256)  # two column blocks, each loading the same a
>>> [found.nodes for found in EqualPattern("load").pairs(program)]
[(1, 5)]
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from nkigym_graph.rewriting.patterns.constraints import checked_op
from nkigym_graph.rewriting.patterns.tree import Found, Where, attrs_match

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

Key = tuple[Any, ...]
"""What equal statements share: op, attributes, the operands they read, the shape and
region of the tile they define."""
Spec = tuple[str, int, int, int, int]
"""A pair: ``(the variable both read first, the order keys of the later statement and of
the earlier, the later, the earlier)``: sorted as tuples, pairs are in program order
(order keys hold along the derivations an analysis follows)."""


class EqualPattern:
    """Statements of one op computing the same value (see the module docstring)."""

    __slots__ = ("attrs", "op", "where")

    def __init__(self, op_name: str | None = None, /, *, where: Where | None = None, **attrs: Any) -> None:
        checked_op("EqualPattern", op_name, attrs)
        self.op = op_name
        self.where = where
        self.attrs = attrs

    def key(self, program: Program, node: int) -> Key | None:
        """What ``node`` shares with the statements equal to it (None: it is no member)."""
        stmt = program[node]
        if (self.op is not None and stmt.op.name != self.op) or stmt.accumulate or len(stmt.writes) != 1:
            return None
        if not attrs_match(stmt, self.attrs):
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
    """An equal pattern's groups in one snapshot (``derived`` updates them)."""

    pattern: EqualPattern
    program: Program
    groups: Mapping[Key, tuple[int, ...]]
    """The members of each key with at least one member, in program order."""
    specs: list[Spec]
    """Sorted."""

    @classmethod
    def of(cls, pattern: EqualPattern, program: Program) -> EqualMatches:
        nodes = program.statements_of(pattern.op) if pattern.op is not None else program.ids
        groups = _grouped(pattern, program, nodes)
        return cls(pattern, program, groups, sorted(_specs(program, groups)))

    def derived(self, program: Program) -> EqualMatches | None:
        """The groups in ``program``, derived from ``self.program`` (None: it is not
        this snapshot's child): only the groups a dirty or removed statement was or is
        in are rebuilt."""
        derivation = program.derivation
        if derivation is None or derivation.parent() is not self.program:
            return None
        pattern, parent = self.pattern, self.program
        dirty, removed = derivation.dirty, derivation.removed
        affected = {key for old in (*removed, *dirty) if (key := pattern.key(parent, old)) is not None}
        joining = _grouped(pattern, program, dirty)
        affected.update(joining)
        groups = dict(self.groups)
        before = {key: groups.pop(key) for key in affected if key in groups}
        rebuilt: dict[Key, tuple[int, ...]] = {}
        for key in affected:
            kept = (n for n in before.get(key, ()) if n not in removed and n not in dirty)
            members = tuple(program.in_order({*kept, *joining.get(key, ())}))
            if members:
                rebuilt[key] = members
        groups.update(rebuilt)
        # the pairs of the groups before (order keys hold along derivations: the same
        # tuples as listed) leave, those of the groups after join, in sorted places
        leaving, joining_specs = _specs(parent, before), _specs(program, rebuilt)
        specs = None
        if 8 * (len(leaving) + len(joining_specs)) < len(self.specs):
            specs = _replaced(self.specs, leaving, joining_specs)
        if specs is None:
            dropped = {n for nodes in before.values() for n in nodes}
            specs = [spec for spec in self.specs if spec[3] not in dropped]
            specs.extend(joining_specs)
            specs.sort()
        return EqualMatches(pattern, program, groups, specs)

    def pair_specs(self) -> list[Spec]:
        return self.specs

    def found(self, spec: Spec) -> Found:
        earlier, later = spec[4], spec[3]
        return Found(earlier, (earlier, later), {})

    def pairs(self) -> list[Found]:
        return [self.found(spec) for spec in self.specs]

    def runs(self) -> list[Found]:
        rank = self.program.order_key
        firsts = sorted((rank(nodes[0]), nodes) for nodes in self.groups.values() if len(nodes) > 1)
        return [Found(nodes[0], nodes, {}) for _, nodes in firsts]


def _grouped(pattern: EqualPattern, program: Program, nodes: Iterable[int]) -> dict[Key, tuple[int, ...]]:
    """The members among ``nodes`` by key, in program order."""
    found: dict[Key, list[int]] = {}
    for node in nodes:
        key = pattern.key(program, node)
        if key is not None:
            found.setdefault(key, []).append(node)
    return {key: tuple(program.in_order(members)) for key, members in found.items()}


def _replaced(specs: list[Spec], leaving: list[Spec], joining: list[Spec]) -> list[Spec] | None:
    """Sorted ``specs`` without ``leaving`` and with ``joining``, each found or placed by
    bisection (None if one of ``leaving`` is not there)."""
    out = list(specs)
    for spec in leaving:
        at = bisect.bisect_left(out, spec)
        if at == len(out) or out[at] != spec:
            return None
        del out[at]
    for spec in joining:
        bisect.insort(out, spec)
    return out


def _specs(program: Program, groups: Mapping[Key, tuple[int, ...]]) -> list[Spec]:
    rank = program.order_key
    out: list[Spec] = []
    for key, nodes in groups.items():
        first_read = key[2][0].var if key[2] else ""
        out.extend(
            (first_read, rank(nodes[k]), rank(nodes[k - 1]), nodes[k], nodes[k - 1])
            for k in range(1, len(nodes))
        )
    return out
