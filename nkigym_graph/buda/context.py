"""What the rules look at: a fused op with its data-flow facts, or the whole netlist.

:class:`FusedContext` walks a fused op once, in execution order, and records for every
operand read (:class:`OperandRead`) what the backend's own fused-op parser knows at that
point: the dims of an ``intermed``/``dest`` value (from the sub-op that last wrote it),
the producing sub-op and schedule, and every read of the same buffer value (so a rule can
tell whether it is *forked*: read by more than one sub-op before it is written again).
External inputs have no known dims, as in the backend (they may be reblocked by pipes).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from nkigym_graph.buda.model import Dims, FusedOp, NetlistOp, SubOp, operand_kind
from nkigym_graph.buda.netlist import Netlist
from nkigym_graph.buda.tms import Tm
from nkigym_graph.ir.targets import Target

INT_FORMATS = ("Int8", "Int32")
FP32_ACC_FORMATS = ("Float32", "Int32")


@dataclass(frozen=True)
class Finding:
    """What a rule reports; the checker turns it into a :class:`Violation` with the rule id.

    ``graph_op`` is set when the finding depends on the graph op running the fused op.
    """

    text: str
    schedule: int | None = None
    sub_op: str | None = None
    graph_op: str | None = None
    fused_op: str | None = None


@dataclass(frozen=True, eq=False)
class OperandRead:
    """One operand of one sub-op."""

    sub_op: SubOp
    schedule: int
    position: int
    index: int
    name: str
    kind: str
    number: int
    dims: Dims | None
    producer: SubOp | None
    producer_schedule: int | None
    consumers: list[tuple[SubOp, int]] = field(default_factory=list)

    @property
    def forked(self) -> bool:
        """True when more than one sub-op reads this value before it is overwritten."""
        return len({id(s) for s, _ in self.consumers}) > 1

    @property
    def tms(self) -> tuple[Tm, ...]:
        """The sub-op's TMs on this operand."""
        return self.sub_op.input_tms(self.index)


@dataclass(eq=False)
class FusedContext:
    """A fused op checked on one architecture, optionally as run by one graph op."""

    netlist: Netlist
    fused: FusedOp
    op: NetlistOp | None
    target: Target
    arch: str
    reads: list[OperandRead] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.reads = _trace_reads(self.fused)

    def steps(self) -> Iterator[tuple[int, int, SubOp]]:
        """``(schedule, position, sub-op)`` in execution order."""
        return self.fused.sub_ops()

    def reads_of(self, sub_op: SubOp) -> list[OperandRead]:
        return [r for r in self.reads if r.sub_op is sub_op]

    def finding(
        self,
        text: str,
        schedule: int | None = None,
        sub_op: SubOp | None = None,
        instance: bool = False,
    ) -> Finding:
        """A finding at a schedule / sub-op; ``instance`` marks it as depending on ``op``."""
        graph_op = self.op.name if instance and self.op is not None else None
        return Finding(text, schedule, sub_op.name if sub_op else None, graph_op)

    @property
    def acc_df(self) -> str | None:
        return self.op.acc_df if self.op else None

    @property
    def is_int(self) -> bool:
        """An integer fused op: accumulation in Int32 (the backend's definition)."""
        return self.acc_df == "Int32"

    def operand_df(self, name: str) -> str | None:
        """Data format of an operand: ``in_df`` for inputs, ``acc_df`` for dest,
        ``intermed_df`` for intermediates (None without a graph op)."""
        if self.op is None:
            return None
        kind, number = operand_kind(name)
        if kind == "input":
            return self.op.in_df[number] if number < len(self.op.in_df) else None
        if kind == "dest":
            return self.op.acc_df
        if kind == "intermed":
            return self.op.intermed_df
        return None

    def is_binary_sfpu(self, sub_op: SubOp) -> bool:
        """Binary ops run on the SFPU: maximum, (de/re)quantization, add with an Int32 input."""
        if sub_op.type in ("maximum", "quantization", "dequantization", "requantization"):
            return True
        return sub_op.type == "add" and any(self.operand_df(n) == "Int32" for n in sub_op.inputs)


@dataclass(eq=False)
class NetlistContext:
    """A whole netlist checked on one architecture."""

    netlist: Netlist
    target: Target
    arch: str


def _trace_reads(fused: FusedOp) -> list[OperandRead]:
    written: dict[str, tuple[Dims, SubOp, int]] = {}
    readers: dict[str, list[tuple[SubOp, int]]] = {}
    reads: list[OperandRead] = []
    for s, p, sub_op in fused.sub_ops():
        for index, name in enumerate(sub_op.inputs):
            kind, number = operand_kind(name)
            dims, producer, producer_schedule = written.get(name, (None, None, None))
            consumers = readers.setdefault(name, [])
            consumers.append((sub_op, index))
            reads.append(
                OperandRead(
                    sub_op,
                    s,
                    p,
                    index,
                    name,
                    kind,
                    number,
                    dims,
                    producer,
                    producer_schedule,
                    consumers,
                )
            )
        written[sub_op.output] = (sub_op.dims, sub_op, s)
        readers[sub_op.output] = []
    return reads
