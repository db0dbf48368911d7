"""``data_reuse``: loads of the same region of the same source collapse to one;
readers of the others read it instead.

Before::

    tensor_0 = a[0:128, 0:128]
    tensor_1 = b[0:128, 0:128]
    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    tensor_3 = a[0:128, 0:128]
    tensor_4 = b[0:128, 128:256]
    tensor_5 = nkigym.nc_matmul(tensor_3, tensor_4)

After (``tensor_3`` replaced by ``tensor_0``)::

    tensor_0 = a[0:128, 0:128]
    tensor_1 = b[0:128, 0:128]
    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    tensor_4 = b[0:128, 128:256]
    tensor_5 = nkigym.nc_matmul(tensor_0, tensor_4)

Each match absorbs a load into the previous load of its region, so a batch of
non-conflicting matches halves the loads of every region while keeping each tile live
only until the next use (``analyze``: what a search steps through, doubling reuse while
on-chip memory allows); ``analyze_batch`` absorbs every load into the first of its
region at once (what saturation applies). Found through the index of loads by source:
grouping by region, linear.
"""

from __future__ import annotations

from typing import NamedTuple

from nkigym_graph import hookimpl
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Statement
from nkigym_graph.rewriting.analysis_cache import Analysis, LazyMatches, analysis_of
from nkigym_graph.rewriting.transform import Edit, Match, Rename, Transform

Region = tuple[str, tuple, tuple]
"""``(source, source slices, tile slices)``: what a load reads and the tile it fills."""
Spec = tuple[str, int, int, int, int]
"""``(source, order keys of the duplicate load and of the previous load of the same
region, the duplicate, the previous load)`` (statement ids): sorted as tuples, specs
are in program order (order keys hold along the derivations an analysis follows)."""


class _Groups(NamedTuple):
    loads: dict[Region, tuple[int, ...]]
    """Loads of each region (single-writer tiles only), in program order."""
    specs: list[Spec]
    """By source, then duplicate and previous load in program order."""


def _region(stmt: Statement) -> Region | None:
    if stmt.op.name != "load":
        return None
    src, dst = stmt.operands
    return (src.var, src.slices, dst.slices)


class DataReuse(Transform):
    """Loads of the same region of one source collapse to one; its readers share it."""

    name = "data_reuse"

    def analyze(self, program: Program) -> list[Match]:
        return list(self.analysis(program).matches)

    def analyze_batch(self, program: Program) -> list[Match]:
        groups = analysis_of(program, self).state  # the cached analysis
        rank = program.order_key
        firsts = sorted(
            (region[0], rank(node), node, nodes[0])
            for region, nodes in groups.loads.items()
            for node in nodes[1:]
        )
        return [self._match(program, first, node) for _, _, node, first in firsts]

    def analysis(self, program: Program) -> Analysis:
        loads: dict[Region, list[int]] = {}
        for source in sorted(program.index.loads_by_source):
            for node in program.loads_of(source):
                region = self._reusable(program, node)
                if region is not None:
                    loads.setdefault(region, []).append(node)
        groups = {region: tuple(nodes) for region, nodes in loads.items()}
        specs = sorted(_specs(program, groups))
        return self._finish(program, _Groups(groups, specs))

    def reanalysis(self, program: Program, previous: Analysis) -> Analysis | None:
        derivation = program.derivation
        parent = derivation.parent() if derivation is not None else None
        if derivation is None or parent is None or not isinstance(previous.state, _Groups):
            return None
        before = previous.state
        dirty, removed = derivation.altered, derivation.removed
        affected: set[Region] = set()
        for old in (*removed, *dirty):
            region = _region(parent[old])
            if region is not None:
                affected.add(region)
        joining: dict[Region, list[int]] = {}
        for node in dirty:
            region = self._reusable(program, node)
            if region is not None:
                affected.add(region)
                joining.setdefault(region, []).append(node)
        loads = {region: nodes for region, nodes in before.loads.items() if region not in affected}
        dropped: set[int] = set()
        rebuilt: dict[Region, tuple[int, ...]] = {}
        for region in affected:
            members_before = before.loads.get(region, ())
            dropped.update(members_before)
            kept = (n for n in members_before if n not in removed and n not in dirty)
            members = tuple(program.in_order({*kept, *joining.get(region, ())}))
            if members:
                rebuilt[region] = members
        loads.update(rebuilt)
        specs = [spec for spec in before.specs if spec[3] not in dropped]
        specs.extend(_specs(program, rebuilt))
        specs.sort()
        return self._finish(program, _Groups(loads, specs))

    def _finish(self, program: Program, groups: _Groups) -> Analysis:
        return Analysis(
            LazyMatches(groups.specs, lambda spec: self._match(program, spec[4], spec[3])), groups
        )

    def _reusable(self, program: Program, node: int) -> Region | None:
        """The region ``node`` loads, if it is a load filling a tile written only there."""
        stmt = program[node]
        region = _region(stmt)
        if region is None or len(program.writers_of(stmt.dst.var)) != 1:
            return None  # a tile written again later is not a pure copy
        return region

    def _match(self, program: Program, keeper: int, duplicate: int) -> Match:
        keep_var = program[keeper].dst.var
        dup_var = program[duplicate].dst.var
        return Match(
            transform=self.name,
            nodes=(keeper, duplicate),
            edit=Edit(absorb={duplicate: keeper}, renames={dup_var: Rename(keep_var)}),
            reads=frozenset({keeper}),
            detail=f"{dup_var} is {keep_var}",
            program_hash=program.canonical_hash,
        )


def _specs(program: Program, loads: dict[Region, tuple[int, ...]]) -> list[Spec]:
    rank = program.order_key
    return [
        (region[0], rank(nodes[k]), rank(nodes[k - 1]), nodes[k], nodes[k - 1])
        for region, nodes in loads.items()
        for k in range(1, len(nodes))
    ]


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [DataReuse]
