"""``reduction_merge``: partial reductions over adjacent chunks of the axis they reduce
become one reduction over both chunks.

Tiling splits a reduction wider than one tile into one statement per chunk, combined as
``tiling.combine`` says; once ``free_dim_merge`` / ``operand_merge`` have made the chunks
slices of one wide tile, two neighbours fold into one statement (within the op's limit
on the reduced axis: ``nc_matmul`` K <= 128 on Trn2, the SBUF row for a free-axis
reduction).

Sums accumulate (``+=``). Before::

    tensor_3 = nkigym.tensor_reduce(tensor_0[0:128, 0:128], op="sum")
    tensor_3[0:128, 0:1] += nkigym.tensor_reduce(tensor_0[0:128, 128:256], op="sum")

After::

    tensor_3 = nkigym.tensor_reduce(tensor_0[0:128, 0:256], op="sum")

Maxima and minima fold through ``tensor_tensor``. Before::

    tensor_1 = nkigym.tensor_reduce(tensor_0[0:128, 0:128], op="max")
    tensor_2 = nkigym.tensor_reduce(tensor_0[0:128, 128:256], op="max")
    tensor_4 = nkigym.tensor_tensor(tensor_1, tensor_2, op="maximum")

After (readers of ``tensor_4`` read ``tensor_1``)::

    tensor_1 = nkigym.tensor_reduce(tensor_0[0:128, 0:256], op="max")

and, inside a chain of folds, ``max(max(x, max(c1)), max(c2))`` becomes
``max(x, max(c1 + c2))`` for neighbouring chunks ``c1``, ``c2``.

Conditions: the same op and attributes; every operand carrying the reduced axis is the
same tile, the first chunk ending where the second starts, all else equal (or two loads
of neighbouring regions of one parameter, which the match merges into one wider load as
``operand_merge`` would, so that one step takes a tiled row to one reduction); nothing else
reads the partial result in between; the second chunk's inputs are ready where the first
statement stands (it takes the merged statement's place). Overlap: a chain of ``+=``
merges pairwise, half of it per batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import NamedTuple

from nkigym_graph import hookimpl
from nkigym_graph.ir.ops import BROADCAST, LOAD
from nkigym_graph.ir.ops.base import Op
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.ir.targets import Target
from nkigym_graph.rewriting.analysis_cache import Analysis
from nkigym_graph.rewriting.patterns.adjacency import MergeAnalysis
from nkigym_graph.rewriting.transform import Edit, Match, Rename, Transform
from nkigym_graph.tiling.combine import RULES, Combine


@cache
def reduced_axis(op: Op) -> str | None:
    """The one axis label ``op``'s inputs carry and its result does not (None: none or several)."""
    kept = set(op.axes[op.write_positions[0]])
    labels = {
        label
        for position in op.read_positions
        for label in op.axes[position]
        if label not in kept and label != BROADCAST
    }
    return labels.pop() if len(labels) == 1 else None


def _rule(stmt: Statement) -> Combine | None:
    return RULES.get((stmt.op.name, stmt.attr("op")))


_OP_NAMES = tuple(sorted({name for name, _ in RULES}))
"""The ops reductions combine with, in the order matches are listed."""


def _may_join(stmt: Statement, target: Target) -> bool:
    """Whether ``stmt`` is a whole reduction chunk that may join a neighbour (a chunk
    already at its op's limit on the reduced axis joins none: matmul K on Trn2)."""
    rule = _rule(stmt)
    axis = reduced_axis(stmt.op)
    if rule is None or rule.partial is not None or axis is None:
        return False
    return stmt.op.can_merge_dim(axis, _joined_size(stmt.op, stmt, stmt, axis) // 2 + 1, target)


class ReductionMerge(Transform):
    """Fold two partial reductions over adjacent chunks into one (see the module docstring)."""

    name = "reduction_merge"

    def analyze(self, program: Program) -> list[Match]:
        return list(self.analysis(program).matches)

    def analysis(self, program: Program) -> Analysis:
        target = program.target
        chunks = {
            name: tuple(n for n in program.statements_of(name) if _may_join(program[n], target))
            for name in _OP_NAMES
        }
        return Analysis(self._found(program, chunks), chunks)

    def reanalysis(self, program: Program, previous: Analysis) -> Analysis | None:
        """Which statements are chunks that may join another depends on the statement
        alone: only the statements the edit changed are sorted in again; whether a
        chunk joins is looked at afresh (it depends on its neighbours)."""
        derivation = program.derivation
        if derivation is None or not isinstance(previous.state, dict):
            return None
        gone = derivation.removed | derivation.changed
        joining: dict[str, list[int]] = {}
        for node in derivation.changed:
            stmt = program[node]
            if stmt.op.name in previous.state and _may_join(stmt, program.target):
                joining.setdefault(stmt.op.name, []).append(node)
        chunks = {
            name: (
                tuple(program.in_order([n for n in nodes if n not in gone] + joining[name]))
                if name in joining
                else tuple(n for n in nodes if n not in gone)
            )
            for name, nodes in previous.state.items()
        }
        return Analysis(self._found(program, chunks), chunks)

    def _found(self, program: Program, chunks: Mapping[str, tuple[int, ...]]) -> tuple[Match, ...]:
        """The folds found from ``chunks`` (by op name, in program order)."""
        matches: list[Match] = []
        seen: set[tuple[int, ...]] = set()  # a fold is found from each of its two chunks
        for nodes in chunks.values():
            for node in nodes:
                rule = _rule(program[node])
                assert rule is not None  # _may_join checked it
                found = (
                    self._accumulated(program, node) if rule.op is None else self._folded(program, node, rule)
                )
                if found is not None and found.nodes not in seen:
                    seen.add(found.nodes)
                    matches.append(found)
        return tuple(matches)

    # -- sums: ``acc += op(chunk)`` after ``acc (+)= op(previous chunk)`` ----------------
    def _accumulated(self, program: Program, second: int) -> Match | None:
        stmt = program[second]
        if not stmt.accumulate:
            return None
        var = stmt.dst.var
        writers = program.writers_of(var)
        at = writers.index(second)
        if at == 0:
            return None
        first = writers[at - 1]
        earlier = program[first]
        rank = program.order_key
        if earlier.dst.slices != stmt.dst.slices or any(
            rank(first) < rank(n) < rank(second) for n, _ in program.consumers_of(var)
        ):
            return None
        join = _joined(program, first, second) or _joined(program, first, second, swapped=True)
        if join is None:
            return None
        edit = _combined(join.loads, Edit(replace={first: join.statement}, absorb={second: first}))
        return self._match(program, (first, second), edit, join.statement)

    # -- maxima and minima: ``fold(op(chunk a), op(chunk b))`` ---------------------------
    def _folded(self, program: Program, node: int, rule: Combine) -> Match | None:
        stmt = program[node]
        if stmt.accumulate:
            return None
        for fold, _ in program.consumers_of(stmt.dst.var):
            found = self._fold_match(program, fold, rule) or self._reassociated(program, fold, rule)
            if found is not None:
                return found
        return None

    def _reassociated(self, program: Program, fold: int, rule: Combine) -> Match | None:
        """``fold(fold(x, op(c1)), op(c2))`` -> ``fold(x, op(c1 + c2))`` for neighbouring chunks."""
        outer = program[fold]
        if outer.op is not rule.op or outer.attrs != rule.attrs or outer.accumulate:
            return None
        for position in outer.op.read_positions:
            inner_var, part = outer.operands[position], outer.operands[1 - position]
            inner, second = _only_writer(program, inner_var), _only_writer(program, part)
            if inner is None or second is None or not _read_only_by(program, (inner_var, part), fold):
                continue
            folding = program[inner]
            if folding.op is not rule.op or folding.attrs != rule.attrs or folding.accumulate:
                continue
            for inner_position in folding.op.read_positions:
                first = _only_writer(program, folding.operands[inner_position])
                if first is None or program.order_key(first) >= program.order_key(second):
                    continue
                if not _read_only_by(program, (folding.operands[inner_position],), inner):
                    continue
                join = _joined(program, first, second) or _joined(program, first, second, swapped=True)
                if join is None:
                    continue
                edit = Edit(
                    replace={first: join.statement},
                    absorb={second: first, fold: inner},
                    renames={outer.dst.var: Rename(folding.dst.var)},
                )
                return self._match(
                    program, (first, second, inner, fold), _combined(join.loads, edit), join.statement
                )
        return None

    def _fold_match(self, program: Program, fold: int, rule: Combine) -> Match | None:
        folding = program[fold]
        if folding.op is not rule.op or folding.attrs != rule.attrs or folding.accumulate:
            return None
        parts = [folding.operands[p] for p in folding.op.read_positions]
        writers = [_only_writer(program, part) for part in parts]
        if any(w is None for w in writers) or writers[0] == writers[1]:
            return None
        first, second = program.in_order(w for w in writers if w is not None)
        for position in folding.op.read_positions:
            if program.consumers_of(folding.operands[position].var) != ((fold, position),):
                return None
        join = _joined(program, first, second) or _joined(program, first, second, swapped=True)
        if join is None:
            return None
        keep = program[first].dst.var
        edit = Edit(
            replace={first: join.statement},
            absorb={second: first, fold: first},
            renames={folding.dst.var: Rename(keep)},
        )
        return self._match(program, (first, second, fold), _combined(join.loads, edit), join.statement)

    def _match(self, program: Program, nodes: tuple[int, ...], edit: Edit, merged: Statement) -> Match:
        changed = set(nodes) | set(edit.changes)
        reads = frozenset(p for n in nodes for p in program.pred_of(n)) - changed
        mentions = frozenset(o.var for n in changed for o in program[n].operands) - set(edit.renames)
        axis = reduced_axis(merged.op)
        return Match(
            transform=self.name,
            nodes=nodes,
            edit=edit,
            reads=reads,
            mentions=mentions,
            detail=f"{merged.op.name} {axis}: statement {', '.join(map(str, nodes[1:]))} into {nodes[0]}",
            program_hash=program.canonical_hash,
        )


def _read_only_by(program: Program, operands: tuple[Operand, ...], node: int) -> bool:
    """Whether statement ``node`` is the only reader of each of ``operands``' variables."""
    return all({n for n, _ in program.consumers_of(o.var)} == {node} for o in operands)


def _only_writer(program: Program, operand: Operand) -> int | None:
    """The one statement writing ``operand``'s variable, when it defines the whole of it."""
    writers = program.writers_of(operand.var)
    if len(writers) != 1 or program.variables[operand.var].external:
        return None
    stmt = program[writers[0]]
    return writers[0] if stmt.dst.slices == operand.slices and not stmt.accumulate else None


class Join(NamedTuple):
    """Statement ``first`` widened over ``second``'s chunk, and the merge of the two load
    tiles the chunks were read from, when they were different tiles (else an empty edit)."""

    statement: Statement
    loads: Edit


def _joined(program: Program, first: int, second: int, swapped: bool = False) -> Join | None:
    """Statement ``first`` widened to cover ``second``'s chunk too, or None when the two
    are not neighbouring chunks of one reduction (``swapped``: ``second``'s chunk comes
    first along the axis). Chunks of two loads of neighbouring regions of one parameter
    join by merging the loads as ``operand_merge`` would."""
    a, b = program[first], program[second]
    if a.op is not b.op or a.attrs != b.attrs:
        return None
    axis = reduced_axis(a.op)
    if axis is None:
        return None
    lower, upper = (b, a) if swapped else (a, b)
    if not a.op.can_merge_dim(axis, _joined_size(a.op, lower, upper, axis), program.target):
        return None  # over the op's limit on the reduced axis (checked before the loads)
    operands = list(a.operands)
    loads = Edit()
    for position in a.op.read_positions:
        low, high = lower.operands[position], upper.operands[position]
        labels = a.op.axes[position]
        if axis not in labels:
            if low != high:
                return None
            continue
        dim = labels.index(axis)
        if low.slices[:dim] + low.slices[dim + 1 :] != high.slices[:dim] + high.slices[dim + 1 :]:
            return None
        if low.var == high.var:
            if low.slices[dim][1] != high.slices[dim][0]:
                return None
            span = (low.slices[dim][0], high.slices[dim][1])
            operands[position] = Operand(low.var, (*low.slices[:dim], span, *low.slices[dim + 1 :]))
        else:
            found = _loads_joined(program, low, high, dim)
            if found is None:
                return None
            operands[position], edit = found
            loads = _combined(loads, edit)
    moved = set(loads.absorb)
    rank = program.order_key
    if any(rank(p) > rank(first) for p in program.pred_of(second) if p != first and p not in moved):
        return None  # the second chunk's inputs are not ready where the merged statement stands
    return Join(a._replace(operands=tuple(operands)), loads)


def _extent(op: Op, stmt: Statement, axis: str) -> int:
    """The extent of ``stmt``'s chunk along the reduced ``axis``."""
    for position in op.read_positions:
        labels = op.axes[position]
        if axis in labels:
            start, stop = stmt.operands[position].slices[labels.index(axis)]
            return stop - start
    return 0


def _joined_size(op: Op, lower: Statement, upper: Statement, axis: str) -> int:
    """The extent along ``axis`` of ``lower``'s chunk followed by ``upper``'s (whether or
    not they are neighbours: ``_joined`` checks that)."""
    return _extent(op, lower, axis) + _extent(op, upper, axis)


def _loads_joined(program: Program, low: Operand, high: Operand, dim: int) -> tuple[Operand, Edit] | None:
    """``low`` (the end of one load tile along ``dim``) and ``high`` (the start of another,
    loading the next region of the same parameter) as one operand of the merged load."""
    analysis = MergeAnalysis(program)
    low_source, high_source = analysis.loaded(low.var), analysis.loaded(high.var)
    if low_source is None or high_source is None or low_source[0] != high_source[0]:
        return None
    low_region, high_region = low_source[1], high_source[1]
    extent = low_region[dim][1] - low_region[dim][0]
    if low.slices[dim][1] != extent or high.slices[dim][0] != 0 or low_region[dim][1] != high_region[dim][0]:
        return None
    if low_region[:dim] + low_region[dim + 1 :] != high_region[:dim] + high_region[dim + 1 :]:
        return None
    members = (program.writers_of(low.var)[0], program.writers_of(high.var)[0])
    axis = LOAD.axes[1][dim]
    if analysis.blocker(members, axis) is not None:
        return None
    edit = analysis.merge_edit(members, axis)
    keeper = program[min(members, key=program.order_key)].dst.var
    span = (low.slices[dim][0], extent + high.slices[dim][1])
    return Operand(keeper, (*low.slices[:dim], span, *low.slices[dim + 1 :])), edit


def _combined(a: Edit, b: Edit) -> Edit:
    return Edit(
        replace={**a.replace, **b.replace},
        absorb={**a.absorb, **b.absorb},
        remove=a.remove | b.remove,
        renames={**a.renames, **b.renames},
    )


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [ReductionMerge]
