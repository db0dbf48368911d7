"""Splitting wide loads when SBUF would overflow.

A merged load such as ``tensor_0 = a[0:128, 0:2048]`` whose readers use disjoint
column blocks (``tensor_0[0:128, 0:128]``, ``tensor_0[0:128, 128:256]``, ...) keeps the
whole block live until its last reader. Splitting it into one load per block read
moves each piece next to its own readers, with the same bytes moved once::

    tensor_0 = a[0:128, 0:2048]            tensor_0_0 = a[0:128, 0:128]
    ... tensor_0[0:128, 0:128] ...   ->    ... tensor_0_0[0:128, 0:128] ...
    ... tensor_0[0:128, 128:256] ...       tensor_0_1 = a[0:128, 128:256]
                                           ... tensor_0_1[0:128, 0:128] ...

The emitter splits, class by class (loads of one parameter with the same reading
pattern), only while that lowers the peak and the peak exceeds SBUF.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.ir.variables import fresh_name

from .ir import Group, Tile
from .memory import Interval, group_positions, live_intervals, peak

Region = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class SplitPlan:
    """A load that can be split: its node, variable and the regions its readers use."""

    node: int
    var: str
    regions: tuple[Region, ...]
    """Distinct, pairwise disjoint regions of the loaded tile, in order of first read."""


def _disjoint(a: Region, b: Region) -> bool:
    return any(hi1 <= lo2 or hi2 <= lo1 for (lo1, hi1), (lo2, hi2) in zip(a, b, strict=True))


def split_plan(program: Program, node: int) -> SplitPlan | None:
    """How to split load ``node``, or None when its readers overlap or use one region."""
    stmt = program[node]
    var = stmt.dst.var
    if stmt.accumulate or program.writers_of(var) != (node,) or var in program.returns:
        return None
    regions: list[Region] = []
    for reader, position in program.consumers_of(var):  # in program order
        region = program[reader].operands[position].slices
        if region not in regions:
            if not all(_disjoint(region, other) for other in regions):
                return None
            regions.append(region)
    return SplitPlan(node, var, tuple(regions)) if len(regions) > 1 else None


def split_loads(program: Program, plans: Sequence[SplitPlan]) -> Program:
    """``program`` with every load of ``plans`` replaced by one load per region."""
    by_node = {plan.node: plan for plan in plans}
    renames: dict[tuple[str, Region], str] = {}
    taken = set(program.variables)
    statements: list[Statement] = []
    for node, stmt in program.items():
        plan = by_node.get(node)
        if plan is None:
            statements.append(stmt)
            continue
        source = stmt.operands[0]
        for index, region in enumerate(plan.regions):
            name = fresh_name(f"{plan.var}_{index}", taken)
            renames[(plan.var, region)] = name
            src = tuple((s0 + lo, s0 + hi) for (s0, _), (lo, hi) in zip(source.slices, region, strict=True))
            dst = tuple((0, hi - lo) for lo, hi in region)
            statements.append(stmt._replace(operands=(Operand(source.var, src), Operand(name, dst))))
    out = []
    for stmt in statements:
        operands = tuple(
            Operand(renames[(o.var, o.slices)], tuple((0, hi - lo) for lo, hi in o.slices))
            if (o.var, o.slices) in renames
            else o
            for o in stmt.operands
        )
        out.append(stmt._replace(operands=operands))
    return program.replace(statements=out)


def best_split(
    program: Program, groups: Sequence[Group], tiles: dict[str, Tile], is_load: Callable[[int], bool]
) -> tuple[list[SplitPlan], int] | None:
    """The class of loads whose split lowers the SBUF peak most, with the estimated new
    peak; None when no split lowers it."""
    intervals = live_intervals(groups)
    current = peak(intervals, "sbuf")
    spans = group_positions(groups)
    live = {iv.tile for iv in current.live}
    classes: dict[tuple[str, tuple[Region, ...]], list[SplitPlan]] = {}
    for node in program.ids:
        if not is_load(node):
            continue
        plan = split_plan(program, node)
        if plan is not None and tiles.get(plan.var) in live:
            source = program[node].operands[0].var
            classes.setdefault((source, plan.regions), []).append(plan)
    best: tuple[list[SplitPlan], int] | None = None
    for plans in classes.values():
        estimate = peak(_after_split(program, plans, intervals, spans, tiles), "sbuf").bytes
        if estimate < current.bytes and (best is None or estimate < best[1]):
            best = (plans, estimate)
    return best


def _after_split(
    program: Program,
    plans: Sequence[SplitPlan],
    intervals: list[Interval],
    spans: dict[int, tuple[int, int]],
    tiles: dict[str, Tile],
) -> list[Interval]:
    """Estimated live ranges once ``plans`` are split: each piece from its first reader
    to its last."""
    replaced = {tiles[plan.var] for plan in plans}
    out = [iv for iv in intervals if iv.tile not in replaced]
    for plan in plans:
        tile = tiles[plan.var]
        for region in plan.regions:
            readers = [
                spans[r]
                for r, pos in program.consumers_of(plan.var)
                if program[r].operands[pos].slices == region
            ]
            shape = tuple(hi - lo for lo, hi in region)
            piece = Tile(tile.name, shape, tile.dtype, tile.buffer, tile.itemsize)
            out.append(Interval(piece, min(lo for lo, _ in readers), max(hi for _, hi in readers)))
    return out
