"""``dead_code``: statements whose results nobody reads are removed.

Before::

    tensor_0 = a[0:128, 0:128]
    tensor_1 = a[0:128, 128:256]     # never read
    tensor_2 = nkigym.activation(tensor_0, op="exp")
    output[0:128, 0:128] = tensor_2

After::

    tensor_0 = a[0:128, 0:128]
    tensor_2 = nkigym.activation(tensor_0, op="exp")
    output[0:128, 0:128] = tensor_2

A statement is dead when every variable it writes is an on-chip tile that is neither
read nor returned. Writes to outputs are never dead. Fragments (statement lists
without a return) are left alone: what they compute is their result.
"""

from __future__ import annotations

from collections.abc import Iterable

from nkigym_graph import hookimpl
from nkigym_graph.ir.program import Program
from nkigym_graph.rewriting.analysis_cache import Analysis, LazyMatches
from nkigym_graph.rewriting.transform import Edit, Match, Transform


class DeadCode(Transform):
    """Remove statements whose results nobody reads."""

    name = "dead_code"

    def analyze(self, program: Program) -> list[Match]:
        return list(self.analysis(program).matches)

    def analysis(self, program: Program) -> Analysis:
        return self._finish(program, self._dead(program, range(len(program))))

    def reanalysis(self, program: Program, previous: Analysis) -> Analysis | None:
        derivation = program.derivation
        if derivation is None or not isinstance(previous.state, tuple):
            return None
        new_of, dirty = derivation.new_of, derivation.dirty
        # a statement turns dead only when a variable it writes loses readers: then it is dirty
        kept = (new_of[node] for node in previous.state if new_of[node] >= 0)
        return self._finish(program, {*(n for n in kept if n not in dirty), *self._dead(program, dirty)})

    def _dead(self, program: Program, nodes: Iterable[int]) -> list[int]:
        if program.fragment:
            return []
        live = set(program.returns)
        variables, statements = program.variables, program.statements
        dead = []
        for node in nodes:
            stmt = statements[node]
            written = [stmt.operands[p].var for p in stmt.op.write_positions]
            if not any(variables[v].external or v in live or program.consumers_of(v) for v in written):
                dead.append(node)
        return dead

    def _finish(self, program: Program, dead: Iterable[int]) -> Analysis:
        nodes = tuple(sorted(dead))
        return Analysis(LazyMatches(nodes, lambda node: self._match(program, node)), nodes)

    def _match(self, program: Program, node: int) -> Match:
        stmt = program.statements[node]
        written = [stmt.operands[p].var for p in stmt.op.write_positions]
        return Match(
            self.name,
            (node,),
            Edit(remove=frozenset({node})),
            detail=f"{', '.join(written)} is never read",
            program_hash=program.canonical_hash,
        )


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [DeadCode]
