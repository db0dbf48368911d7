"""Merging statements of the same op into one wider statement: the grouping behind set
patterns (``nkigym_graph.rewriting.patterns.sets``) and the built-in ``operand_merge``
and ``free_dim_merge`` (seeds 000 and 001).

Statements merge along an axis label ``X`` (``nc_matmul``: ``M`` or ``N``; loads,
stores and elementwise ops: ``partition`` or ``free``) when

1. they have the same op, attributes and accumulation flag;
2. every operand without ``X`` is the same data (two load variables holding the same
   region of a parameter count as the same data);
3. every operand with ``X`` is the same tensor, each statement's range ending where the
   next one's starts, all other ranges equal; a destination each statement defines
   afresh becomes one tensor (the keeper's) of the summed size;
4. the merged size is within the op's limit on the target (``op.can_merge_dim``);
5. no statement reaches another in the DAG (merging would create a cycle, or change
   what a reader in between sees);
6. no merged range crosses a *fence* of its tensor (``nkigym_graph.ir.stitched_names``:
   on Tenstorrent, where one weight of a stitched parameter ends and the next starts),
   so a run of statements stops at a fence.

Candidates come from grouping statements under a signature (op, attributes, every
operand apart from its ``X`` range) and sorting each group by ``X`` start: only
neighbours in that order can be adjacent, so analysis is n log n, never all pairs.
The earliest statement absorbs the others; every other statement that mentions an
absorbed tile reads the merged one at an offset (seed 000's
``output[0:128, 128:256] = tensor_2[0:128, 128:256]``).

``pairs`` gives the two-statement merges of the seeds (the unit a search explores);
``chain_runs`` whole runs of adjacent statements, cut at the limit (what saturation
merges in one match each: the same result in far fewer rounds); ``merge_edit`` the
edit merging either.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from nkigym_graph.ir.ops.base import Op
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.slices import Slices
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.ir.stitched_names import Fences, fences_of
from nkigym_graph.ir.variables import INTERMEDIATE
from nkigym_graph.rewriting.patterns.inherited import Inherited
from nkigym_graph.rewriting.transform import Edit, Rename

Member = tuple[int, int, int]
"""A statement in a merge group: ``(start along the axis, node, end along the axis)``."""
Side = tuple[int, int | None, bool]
"""``(operand position, dimension carrying the axis or None, defines a fresh tile)``."""

Identity = tuple[str, Slices]
"""What data an operand denotes: a variable (or a parameter, for a loaded tile) and a region."""
Signature = tuple[object, ...]
"""What statements merging along one axis share: op, attributes, operands apart from the axis."""

_LAYOUTS: dict[tuple[Op, str], tuple[tuple[int, int | None, bool], ...]] = {}


def _layout(op: Op, axis: str) -> tuple[tuple[int, int | None, bool], ...]:
    """Per operand: position, the dimension labelled ``axis`` (or None), is-a-write."""
    key = (op, axis)
    found = _LAYOUTS.get(key)
    if found is None:
        found = _LAYOUTS[key] = tuple(
            (p, labels.index(axis) if axis in labels else None, p in op.write_positions)
            for p, labels in enumerate(op.axes)
        )
    return found


_UNKNOWN = object()


def _itself(var: str) -> str:
    return var


def _node_of(key: tuple[int, str]) -> int:
    return key[0]


class Facts(NamedTuple):
    """What merges along one axis need of one statement (``MergeAnalysis.facts``)."""

    sides: tuple[Side, ...]
    signature: tuple[Signature, int] | None
    """Group key and sort coordinate (None: the statement has no range along the axis)."""
    size: int
    """Extent of the axis."""
    starts: tuple[int, ...]
    """Where each range along the axis of an operand not defined afresh starts."""
    ends: tuple[int, ...]
    """Where each of them ends."""
    sourced: bool
    """Whether the statement depends on another."""


class MergeAnalysis:
    """Merge candidates of one program (built once per analysis).

    What it learns of a statement (``facts``) depends on the statement, its incoming
    edges and the definitions of the variables it mentions; an analysis of a derived
    snapshot starts from its parent's, less the statements the derivation
    altered or removed (given ``parent``, the parent snapshot's analysis).
    """

    def __init__(self, program: Program, parent: MergeAnalysis | None = None) -> None:
        self.program = program
        self._identities: dict[Operand, Identity] = {}
        self._loaded = Inherited[str, "tuple[str, Slices] | None"](_itself)
        self._facts = Inherited[tuple[int, str], Facts](_node_of)
        self._looked_up: dict[tuple[int, str], Facts] = {}
        """``facts`` already asked for (a plain dictionary in front of ``_facts``)."""
        self._limits: dict[tuple[Op, str, int], str | None] = {}
        self._bounds: dict[tuple[Op, str], int | None] = {}
        self.fences: Fences = fences_of(program)
        self.statement: Callable[[int], Statement] = program.__getitem__
        """The statement of an id (see ``for_every_statement``)."""
        derivation = program.derivation
        if parent is not None and derivation is not None and derivation.parent() is parent.program:
            self._limits = parent._limits  # by op, axis and size on one target: shared
            self._bounds = parent._bounds
            self._facts = parent._facts.handed_down(derivation.altered | derivation.removed)
            self._loaded = parent._loaded.handed_down(derivation.touched)

    def for_every_statement(self) -> MergeAnalysis:
        """This analysis, about to look at every statement: it looks them up in a
        dictionary (built once) rather than by id in the program."""
        by_id = dict(self.program.items())
        self.statement = by_id.__getitem__
        return self

    def loaded(self, var: str) -> tuple[str, Slices] | None:
        """``(parameter, slices)`` a tile holds when one load fills it and nothing else writes it."""
        known = self._loaded.get(var, _UNKNOWN)
        if known is not _UNKNOWN:
            return known
        program = self.program
        info = program.variables.get(var)
        found = None
        if info is not None and info.defined_by is not None:
            stmt = self.statement(info.defined_by)
            if stmt.op.name == "load" and len(program.writers_of(var)) == 1:
                found = (stmt.operands[0].var, stmt.operands[0].slices)
        self._loaded.put(var, found)
        return found

    # -- identity and roles -------------------------------------------------------------
    def identity(self, operand: Operand) -> Identity:
        """What data an operand denotes: a parameter region for a loaded tile."""
        found = self._identities.get(operand)
        if found is None:
            source = self.loaded(operand.var)
            if source is None:
                found = (operand.var, operand.slices)
            else:
                param, base = source
                found = (
                    param,
                    tuple([(b + s, b + e) for (s, e), (b, _) in zip(operand.slices, base, strict=True)]),
                )
            self._identities[operand] = found
        return found

    def facts(self, node: int, axis: str) -> Facts:
        """What merges of ``node`` along ``axis`` need of it."""
        key = (node, axis)
        found = self._looked_up.get(key)
        if found is None:
            found = self._facts.get(key, None)
            if found is None:
                found = self._learn(node, axis)
                self._facts.put(key, found)
            self._looked_up[key] = found
        return found

    def _learn(self, node: int, axis: str) -> Facts:
        program = self.program
        stmt = self.statement(node)
        op, operands, accumulate = stmt.op, stmt.operands, stmt.accumulate
        layout = _LAYOUTS.get((op, axis)) or _layout(op, axis)
        sides = []
        parts: list[object] = [op, stmt.attrs, accumulate]
        coordinate = size = None
        starts: list[int] = []
        ends: list[int] = []
        for position, dim, is_write in layout:
            var, slices = operand = operands[position]
            fresh = False
            if is_write and not accumulate:
                info = program.variables[var]
                fresh = info.kind == INTERMEDIATE and info.defined_by == node
            sides.append((position, dim, fresh))
            if dim is None:
                parts.append(len(slices) if fresh else self.identity(operand))
                continue
            start, stop = slices[dim]
            if size is None:
                size = stop - start
            if fresh:
                parts.append(len(slices))
                continue
            parts.append((var, slices[:dim] + slices[dim + 1 :]))
            starts.append(start)
            ends.append(stop)
            if coordinate is None:
                coordinate = start
        data_in, order_in = program.incoming
        return Facts(
            tuple(sides),
            None if coordinate is None else (tuple(parts), coordinate),
            size or 0,
            tuple(starts),
            tuple(ends),
            bool(data_in[node] or order_in[node]),
        )

    def sides(self, node: int, axis: str) -> tuple[Side, ...]:
        """Each operand's role in a merge of ``node`` along ``axis``."""
        return self.facts(node, axis).sides

    def signature(self, node: int, axis: str) -> tuple[Signature, int] | None:
        """Group key and sort coordinate of ``node`` for merges along ``axis``."""
        return self.facts(node, axis).signature

    def size(self, node: int, axis: str) -> int:
        """Extent of ``axis`` in statement ``node``."""
        return self.facts(node, axis).size

    # -- candidates ---------------------------------------------------------------------
    def groups(self, nodes: Iterable[int], axis: str) -> list[list[Member]]:
        """The members of each group of nodes sharing a signature, sorted."""
        found: dict[Signature, list[Member]] = {}
        for node in nodes:
            sig = self.signature(node, axis)
            if sig is not None:
                found.setdefault(sig[0], []).append((sig[1], node, sig[1] + self.size(node, axis)))
        rank = self.program.order_key
        return [
            sorted(members, key=lambda m: (m[0], rank(m[1]), m[2]))
            for members in found.values()
            if len(members) > 1
        ]

    def chains(self, members: Sequence[Member], axis: str) -> list[list[int]]:
        """Maximal chains of adjacent statements in a sorted group.

        Where several statements start at one coordinate (the same region loaded once
        per row block), the k-th of them in program order continues the k-th of those
        ending there: chains stay within a block instead of jumping between blocks.
        """
        level: dict[int, list[int]] = {}
        for start, node, _ in members:
            level.setdefault(start, []).append(node)
        order = self.program.order_key
        for nodes in level.values():
            nodes.sort(key=order)
        rank = {node: k for nodes in level.values() for k, node in enumerate(nodes)}
        successor: dict[int, int] = {}
        facts, fences = self.facts, self.fences
        for _, node, end in members:
            following = level.get(end)
            if following is None:
                continue
            k = rank[node]
            adjacent = k < len(following) and facts(node, axis).ends == facts(following[k], axis).starts
            if adjacent and not (fences and self.fence_at(node, axis)):  # rule 6: at no fence
                successor[node] = following[k]
        start_of = {node: start for start, node, _ in members}
        heads = sorted(set(successor) - set(successor.values()), key=lambda n: (start_of[n], order(n)))
        out = []
        for head in heads:
            chain = [head]
            while chain[-1] in successor:
                chain.append(successor[chain[-1]])
            out.append(chain)
        return out

    def adjacent(self, lower: int, upper: int, axis: str) -> bool:
        """Whether every non-fresh ``axis`` range of ``lower`` ends where ``upper``'s starts
        (two members of one group: the same operands are fresh in both), at no fence."""
        meet = self.facts(lower, axis).ends == self.facts(upper, axis).starts
        return meet and not (self.fences and self.fence_at(lower, axis))

    def apart(self, lower: int, upper: int, axis: str) -> str:
        """Why ``lower`` and ``upper`` (not ``adjacent``) are not adjacent along ``axis``."""
        if self.facts(lower, axis).ends == self.facts(upper, axis).starts:
            return f"statements {lower} and {upper} meet at a fence: {self.fence_at(lower, axis)}"
        return (
            f"the {axis} ranges are not adjacent (statement {lower}'s {axis} range does not end "
            f"where statement {upper}'s starts)"
        )

    def fence_at(self, node: int, axis: str) -> str | None:
        """The fence (rule 6) where a non-fresh ``axis`` range of ``node`` ends, said in
        words, or None."""
        operands = self.statement(node).operands
        for position, dim, fresh in self.sides(node, axis):
            if dim is None or fresh:
                continue
            var, slices = operands[position]
            end = slices[dim][1]
            if end in self.fences.get(var, {}).get(dim, ()):
                return (
                    f"{var}'s range ends at {end} along dimension {dim}, a fence of {var} "
                    f"on {self.program.target.name} (where one stitched weight ends and the next "
                    "starts: the backend keeps the weights apart)"
                )
        return None

    # -- rules 4 and 5 ------------------------------------------------------------------
    def limit_blocker(self, members: Sequence[int], axis: str) -> str | None:
        """The limit message if the merged size is too large, else None."""
        op = self.statement(members[0]).op
        return self.size_blocker(op, axis, sum(self.size(n, axis) for n in members))

    def size_blocker(self, op: Op, axis: str, total: int) -> str | None:
        """The limit message if ``op`` may not be ``total`` wide along ``axis``, else None."""
        program = self.program
        key = (op, axis, total)
        if key not in self._limits:
            self._limits[key] = (
                None
                if op.can_merge_dim(axis, total, program.target)
                else f"{op.name} {axis} would be {total} > {op.limit(axis, program.target)} on "
                f"{program.target.name}"
            )
        return self._limits[key]

    def smallest_merge(self, op: Op, axis: str) -> int | None:
        """Beyond what size no two statements of ``op`` merge along ``axis`` (None: no
        bound known; an op deciding sizes itself, ``can_merge_dim``, gives none)."""
        key = (op, axis)
        if key not in self._bounds:
            plain = type(op).can_merge_dim is Op.can_merge_dim  # the limit is a plain upper bound
            self._bounds[key] = op.limit(axis, self.program.target) if plain else None
        return self._bounds[key]

    def dependency_blocker(self, members: Sequence[int]) -> str | None:
        """Whether one member reaches another (walking back from each, never below the first)."""
        pred, rank = self.program.pred_of, self.program.order_key
        others = set(members)
        low = min(rank(n) for n in members)
        for start in members:
            seen = {start}
            queue = deque([start])
            while queue:
                for prev in pred(queue.popleft()):
                    if prev in others:
                        return f"statement {start} depends on statement {prev}: merging would create a cycle"
                    if rank(prev) > low and prev not in seen:
                        seen.add(prev)
                        queue.append(prev)
        return None

    def blocker(self, members: Sequence[int], axis: str) -> str | None:
        """Why adjacent ``members`` may not merge, or None."""
        return self.limit_blocker(members, axis) or self.dependency_blocker(members)

    # -- matches ------------------------------------------------------------------------
    def pairs(self, nodes: Iterable[int], axis: str) -> list[tuple[int, int]]:
        """Every mergeable adjacent pair (the seeds' unit of merging)."""
        return [
            (lower, upper)
            for group in self.groups(nodes, axis)
            for chain in self.chains(group, axis)
            for lower, upper in itertools.pairwise(chain)
            if self.blocker((lower, upper), axis) is None
        ]

    def chain_runs(self, members: Sequence[Member], axis: str) -> list[Sequence[int]]:
        """``runs`` of one sorted group; a chunk in which one statement reaches another
        falls back to its mergeable pairs."""
        out: list[Sequence[int]] = []
        for run in self.chains(members, axis):
            for chunk in self._chunks(run, axis):
                if self.dependency_blocker(chunk) is None:
                    out.append(chunk)
                else:
                    out.extend(self.pairs(chunk, axis))
        return out

    def _chunks(self, run: Sequence[int], axis: str) -> list[list[int]]:
        chunks: list[list[int]] = []
        current: list[int] = []
        for node in run:
            if current and self.limit_blocker([*current, node], axis) is not None:
                chunks.append(current)
                current = []
            current.append(node)
        chunks.append(current)
        return [c for c in chunks if len(c) > 1]

    def merge_edit(self, members: Sequence[int], axis: str) -> Edit:
        """The edit merging ``members`` (sorted by ``axis`` coordinate) into the earliest:
        the keeper's operands widened, the others absorbed, their fresh tiles renamed to
        the keeper's at their offsets."""
        program = self.program
        stmts = [program[n] for n in members]
        keeper = min(members, key=program.order_key)
        kept = program[keeper]
        operands = list(kept.operands)
        renames: dict[str, Rename] = {}
        for position, dim, fresh in self.sides(members[0], axis):
            if dim is None:
                continue
            parts = [s.operands[position] for s in stmts]
            if fresh:
                merged_var = kept.operands[position].var
                offset = 0
                for part in parts:
                    if part.var != merged_var or offset:
                        renames[part.var] = Rename(merged_var, dim, offset)
                    offset += part.slices[dim][1]
                first = parts[0].slices
                operands[position] = Operand(merged_var, (*first[:dim], (0, offset), *first[dim + 1 :]))
            else:
                first = parts[0].slices
                merged = (first[dim][0], parts[-1].slices[dim][1])
                operands[position] = Operand(parts[0].var, (*first[:dim], merged, *first[dim + 1 :]))
        return Edit(
            replace={keeper: kept._replace(operands=tuple(operands))},
            absorb=dict.fromkeys(program.in_order(set(members) - {keeper}), keeper),
            renames=renames,
        )
