"""Memoized, demand-driven interpretation of programs that share statements.

A statement's value is the region it writes, as it stands after the statement. The
canonical node key (``Program.node_keys``) names that value across programs: it hashes
the op, the slices and the keys of the producers of everything read. So a value
computed for one search state serves every other state holding a statement with the
same key, and a new state only computes the statements whose key changed.

``Evaluator.run(program, targets, sink)`` computes the values of ``targets`` (with the
part of their ancestry not in the memo), hands each to ``sink`` in program order and
frees intermediate values as soon as their last reader has run. Copies and
allocations (``dma`` and ``none`` engines) are recomputed instead of memoized: they
are views or zeros. Semantics are those of ``nkigym_graph.interpret`` in float64.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from nkigym_graph.errors import SearchError
from nkigym_graph.ir.dependencies import Use
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.slices import Slices, contains, intersection
from nkigym_graph.ir.statement import Statement
from nkigym_graph.numeric.blas import one_blas_thread
from nkigym_graph.numeric.memo import ByteLRU

RECOMPUTED_ENGINES = frozenset({"dma", "none"})
"""Engines whose statements are cheap to redo (copies, allocations): never memoized."""

Sink = Callable[[int, np.ndarray], None]


def _index(region: Slices, within: Slices) -> tuple[slice, ...]:
    """Index of ``region`` inside an array holding ``within``."""
    return tuple([slice(s - w, e - w) for (s, e), (w, _) in zip(region, within, strict=True)])


Incoming = Mapping[int, tuple[tuple[int, Use], ...]]


class Evaluator:
    """Runs programs on fixed float64 ``inputs`` with a shared memo (see the module docstring)."""

    def __init__(self, inputs: Mapping[str, np.ndarray], memo: ByteLRU) -> None:
        self.inputs = dict(inputs)
        self.memo = memo
        self.computed = 0
        """Memoizable statements computed so far (not found in the memo)."""

    def run(self, program: Program, targets: Sequence[int], sink: Sink) -> None:
        """Compute the values of ``targets`` and pass each to ``sink`` in program order."""
        with one_blas_thread():
            self._run(program, targets, sink)

    def _run(self, program: Program, targets: Sequence[int], sink: Sink) -> None:
        keys = program.node_keys
        data_in = program.incoming[0]
        memo = self.memo
        values: dict[int, np.ndarray] = {}
        needed: set[int] = set()
        uses: dict[int, int] = {}
        stack = list(targets)
        for node in targets:
            uses[node] = uses.get(node, 0) + 1
        while stack:
            node = stack.pop()
            if node in needed or node in values:
                continue
            if program[node].op.engine not in RECOMPUTED_ENGINES:
                hit = memo.get(keys[node])
                if hit is not None:
                    values[node] = hit
                    continue
            needed.add(node)
            for src, _ in data_in[node]:
                uses[src] = uses.get(src, 0) + 1
                stack.append(src)
        wanted = set(targets)
        for node in program.in_order(needed | wanted):
            if node not in values:
                stmt = program[node]
                values[node] = self._compute(program, node, stmt, data_in, values)
                if stmt.op.engine not in RECOMPUTED_ENGINES:
                    self.computed += 1
                    memo.put(keys[node], values[node])
            if node in needed:
                for src, _ in data_in[node]:
                    self._release(src, uses, values)
            if node in wanted:
                sink(node, values[node])
                self._release(node, uses, values)

    @staticmethod
    def _release(node: int, uses: dict[int, int], values: dict[int, np.ndarray]) -> None:
        uses[node] -= 1
        if not uses[node]:
            values.pop(node, None)

    def _compute(
        self,
        program: Program,
        node: int,
        stmt: Statement,
        data_in: Incoming,
        values: Mapping[int, np.ndarray],
    ) -> np.ndarray:
        op = stmt.op
        shape = tuple([e - s for s, e in stmt.dst.slices])
        if not op.read_positions:  # an allocation: zero-initialised (a read-only view, no memory)
            return np.broadcast_to(np.float64(0.0), shape)
        inputs = [self._read(program, node, stmt, p, data_in, values) for p in op.read_positions]
        result = np.asarray(op.compute(inputs, stmt.attr_map), dtype=np.float64)
        if stmt.accumulate:
            result = self._read(program, node, stmt, op.write_positions[0], data_in, values) + result
        if result.shape != shape:
            result = np.broadcast_to(result, shape)
        return result

    def _read(
        self,
        program: Program,
        node: int,
        stmt: Statement,
        position: int,
        data_in: Incoming,
        values: Mapping[int, np.ndarray],
    ) -> np.ndarray:
        """The region operand ``position`` of ``node`` (``stmt``) reads, from its
        producers' values."""
        var, slices = stmt.operands[position]
        sources = [src for src, use in data_in[node] if use.position == position]
        if not sources:
            data = self.inputs.get(var)
            if data is None:
                raise SearchError(f"evaluation: {var!r} is read by statement {node} but nothing writes it")
            return data[tuple([slice(s, e) for s, e in slices])]
        if len(sources) == 1:
            region = program[sources[0]].dst.slices
            if contains(region, slices):
                return values[sources[0]][_index(slices, region)]
        out = np.empty(tuple([e - s for s, e in slices]))
        for src in program.in_order(sources):  # program order: later writes win
            region = program[src].dst.slices
            common = intersection(region, slices)
            if common is not None:
                out[_index(common, slices)] = values[src][_index(common, region)]
        return out
