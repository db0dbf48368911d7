"""Schedules of a fused op: where each micro-op reads from and writes to.

Given the group's micro-ops in execution order and their blocks:

- a new schedule starts after every matmul/reduce (seed 004 rule 7; the backend also
  wants a matmul/reduce last in its schedule);
- operands from outside become fused-op inputs ``input<i>`` (one per source; a source
  read as matmul input 1 gets its own input, so input 1 is never forked to other ops,
  rule 12);
- a result read once, by the very next op, goes through ``dest`` when that is legal: not
  the output of a matmul/reduce (rule 6) or of a binary SFPU op (``maximum``, rule 12),
  not into a matmul/reduce (rule 4) or ``maximum`` (rule 5), and on Grayskull only as
  input 0 (rule 3; ``add``/``multiply`` swap their operands to get there). dest is then
  never forked (rule 2) and never outlives its schedule (rule 6);
- every other result goes to an intermediate buffer, reused once free if its ublock is
  the same (unsupported 7), popped by its last reader (``pop_last`` where a matmul
  re-reads input 1 for every mblock row);
- the exit writes ``output`` (a matmul/reduce with ``m_k > 1`` writes an intermediate and
  a ``datacopy`` in one more schedule copies it out, rule 18).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .group import GroupMicros
from .nodes import ConstSource, NodeSource, ParamSource, Source

NO_DEST_OUTPUT = frozenset(
    {"matmul", "reduce", "maximum", "quantization", "dequantization", "requantization"}
)
NO_DEST_INPUT = frozenset({"matmul", "reduce", "maximum"})
COMMUTATIVE = frozenset({"add", "multiply", "maximum"})
Dims = tuple[tuple[int, int], tuple[int, int]]


@dataclass
class FusedSpec:
    """A ``fused_ops`` entry and the graph op's inputs in order."""

    spec: dict[str, Any]
    sources: list[Source]
    sub_ops: int


@dataclass
class _Buffers:
    ublock: dict[int, tuple[int, int]] = field(default_factory=dict)
    free: list[int] = field(default_factory=list)

    def take(self, ublock: tuple[int, int]) -> int:
        for k in reversed(self.free):
            if self.ublock[k] == ublock:
                self.free.remove(k)
                return k
        k = len(self.ublock)
        self.ublock[k] = ublock
        return k


def _input_key(source: Source, matmul_input1: bool) -> tuple[Source, bool]:
    return (source, matmul_input1)


def _places(group: GroupMicros, grayskull: bool) -> dict[int, str]:
    """``"dest"`` or ``"intermed"`` for every non-exit result; swaps operands where needed."""
    subs, order = group.subs, group.order
    position = {i: k for k, i in enumerate(order)}
    readers = group.readers()
    places: dict[int, str] = {}
    for i in order:
        if i == group.exit:
            continue
        reads = readers[i]
        places[i] = "intermed"
        if len(reads) != 1 or subs[i].type in NO_DEST_OUTPUT:
            continue
        reader, operand = reads[0]
        if position[reader] != position[i] + 1 or subs[reader].type in NO_DEST_INPUT:
            continue
        if grayskull and operand == 1:
            if subs[reader].type not in COMMUTATIVE:
                continue
            subs[reader].inputs.reverse()
        places[i] = "dest"
    return places


def build_schedules(group: GroupMicros, dims: dict[int, Dims], grayskull: bool) -> FusedSpec:
    """The fused op of ``group`` whose micro-ops have blocks ``dims`` (see the module doc)."""
    subs, order = group.subs, group.order
    places = _places(group, grayskull)
    readers = group.readers()
    last_reader = {i: reads[-1][0] for i, reads in readers.items() if reads}
    inputs: dict[tuple[Source, bool], int] = {}
    sources: list[Source] = []
    buffers = _Buffers()
    buffer_of: dict[int, int] = {}
    schedules: list[list[dict[str, Any]]] = [[]]
    position_of = {i: k for k, i in enumerate(order)}
    for i in order:
        sub = subs[i]
        names: list[str] = []
        pop: list[str] = []
        pop_last: list[str] = []
        freed: list[int] = []
        for position, operand in enumerate(sub.inputs):
            if not isinstance(operand, int):
                key = _input_key(operand, sub.type == "matmul" and position == 1)
                if key not in inputs:
                    inputs[key] = len(sources)
                    sources.append(operand)
                names.append(f"input{inputs[key]}")
            elif places[operand] == "dest":
                names.append("dest")
            else:
                name = f"intermed{buffer_of[operand]}"
                names.append(name)
                if last_reader[operand] == i and name not in pop + pop_last:
                    reused = sub.type == "matmul" and position == 1 and dims[i][0][0] > 1
                    (pop_last if reused else pop).append(name)
                    freed.append(buffer_of[operand])
        buffers.free.extend(freed)
        if i == group.exit:
            output = "output"
        elif places[i] == "dest":
            output = "dest"
        else:
            buffer_of[i] = buffers.take(dims[i][1])
            output = f"intermed{buffer_of[i]}"
        entry = _entry(sub.type, names, sub.attributes, pop, pop_last, dims[i], output)
        schedules[-1].append({f"{sub.type}_{position_of[i]}": entry})
        if sub.contracts and i != group.exit:
            schedules.append([])
    spec = {"inputs": len(sources), "intermediates": len(buffers.ublock), "schedules": schedules}
    return FusedSpec(spec, sources, len(order))


def _entry(
    kind: str,
    inputs: list[str],
    attributes: dict[str, Any],
    pop: list[str],
    pop_last: list[str],
    dims: Dims,
    output: str,
) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": kind, "inputs": inputs}
    if attributes:
        entry["attributes"] = dict(attributes)
    if pop:
        entry["pop"] = pop
    if pop_last:
        entry["pop_last"] = pop_last
    entry["mblock"] = list(dims[0])
    entry["ublock"] = list(dims[1])
    entry["output"] = output
    return entry


def input_tms(source: Source) -> list[Any]:
    """The graph op's TMs on an input reading ``source``."""
    if isinstance(source, ConstSource):
        rows, cols = source.constant.broadcast(*source.shape)
        return [{"broadcast": {dim: n}} for dim, n in (("r", rows), ("c", cols)) if n > 1]
    assert isinstance(source, ParamSource | NodeSource)
    transpose: list[Any] = ["transpose"] if isinstance(source, NodeSource) and source.transposed else []
    return transpose + source.layout.tms()
