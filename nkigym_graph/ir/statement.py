"""Operands and statements: the frozen payloads of a program's DAG nodes.

A statement is ``(op, operands, attrs, accumulate)``. Operands are positional and
mapped to ``op.operand_names``; every operand is ``(var, slices)`` with explicit
slices. ``attrs`` holds an op's non-tensor arguments (``op="tanh"``, a dtype, a
scalar) as a sorted tuple of pairs, so a statement is hashable and immutable.

>>> from nkigym_graph.ir.ops import NC_MATMUL
>>> s = Statement(NC_MATMUL, (Operand("t0", ((0, 128), (0, 128))),
...                           Operand("t1", ((0, 128), (0, 512))),
...                           Operand("t2", ((0, 128), (0, 512)))))
>>> s.dst.var, s.reads[1].slices
('t2', ((0, 128), (0, 512)))
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from nkigym_graph.ir.slices import Slices

if TYPE_CHECKING:
    from nkigym_graph.ir.ops.base import Op

Attrs = tuple[tuple[str, Any], ...]


class Operand(NamedTuple):
    """A reference to a region of a tensor variable."""

    var: str
    slices: Slices

    def __str__(self) -> str:
        from nkigym_graph.ir.slices import format_slices

        return f"{self.var}[{format_slices(self.slices)}]"


class Statement(NamedTuple):
    """One operation of a program. Immutable; compared by value."""

    op: Op
    operands: tuple[Operand, ...]
    attrs: Attrs = ()
    accumulate: bool = False
    """``dst[...] += op(...)``: the destination region is read and added to."""

    @property
    def reads(self) -> tuple[Operand, ...]:
        """The operands the op reads (the destination too when accumulating)."""
        ops = self.operands
        read = tuple(ops[p] for p in self.op.read_positions)
        if self.accumulate:
            read += tuple(ops[p] for p in self.op.write_positions)
        return read

    def read_items(self) -> Iterator[tuple[int, Operand]]:
        """``(position, operand)`` for every read, the accumulated destination included."""
        ops = self.operands
        for p in self.op.read_positions:
            yield p, ops[p]
        if self.accumulate:
            for p in self.op.write_positions:
                yield p, ops[p]

    @property
    def writes(self) -> tuple[Operand, ...]:
        """The operands the op writes."""
        return tuple(self.operands[p] for p in self.op.write_positions)

    @property
    def dst(self) -> Operand:
        """The (single) written operand."""
        return self.operands[self.op.write_positions[0]]

    @property
    def attr_map(self) -> Mapping[str, Any]:
        """``attrs`` as a mapping."""
        return dict(self.attrs)

    def attr(self, name: str, default: Any = None) -> Any:
        """One attribute's value."""
        for key, value in self.attrs:
            if key == name:
                return value
        return default

    def with_operand(self, position: int, operand: Operand) -> Statement:
        """A copy with one operand replaced."""
        ops = self.operands
        return self._replace(operands=(*ops[:position], operand, *ops[position + 1 :]))

    def renamed(self, mapping: Mapping[str, str]) -> Statement:
        """A copy with variables renamed by ``mapping`` (others unchanged)."""
        return self._replace(
            operands=tuple(Operand(mapping.get(o.var, o.var), o.slices) for o in self.operands)
        )


def make_attrs(**attrs: Any) -> Attrs:
    """Canonical (sorted, frozen) attribute tuple."""
    return tuple(sorted(attrs.items()))


class StatementsById(Protocol):
    """Statements looked up by node id (a ``Program``, a dict by id, or a sequence of a
    freshly built program's statements, whose ids are their positions)."""

    def __getitem__(self, node: int, /) -> Statement: ...


Statements = Sequence[Statement] | Mapping[int, Statement]
"""Statements by node: a full build's tuple (ids are positions) or a dict by id."""
