"""Tree patterns: a statement and, below it, the statements producing its operands.

``Pattern("activation", Pattern("activation", op="relu", capture="inner"), op="relu",
capture="outer")`` matches an ``activation`` with ``op="relu"`` whose first operand is
produced by another relu, and names both. A pattern constrains

- the op (its name; None matches every op),
- attributes: a value, or a predicate called with the value (``scale=lambda s: s > 0``),
- operands: one sub-pattern (or None: anything) per operand the statement reads, in
  the order of ``Statement.reads``; a sub-pattern matches the statement whose data the
  operand reads, and only when exactly one statement produces it (an accumulated tile
  written by several statements matches no sub-pattern),
- ``where(program, node)``: any other condition on the statement.

A match is a ``Found``: the root, every matched statement, and the named ones.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> program = tiled_matmul(128, 128, 128)
>>> pattern = Pattern("nc_matmul", Pattern("load", capture="lhs"), capture="mm")
>>> found = pattern.at(program, program.statements_of("nc_matmul")[0])
>>> program[found["lhs"]].op.name, found["mm"] == found.root
('load', True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nkigym_graph.errors import TransformError, shorten
from nkigym_graph.rewriting.patterns.constraints import checked_op

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program
    from nkigym_graph.ir.statement import Statement

Where = Callable[["Program", int], bool]
"""A condition on one statement of a program."""


def attrs_match(stmt: Statement, attrs: Mapping[str, Any]) -> bool:
    """Whether ``stmt`` meets every attribute constraint of ``attrs`` (a value, or a
    predicate called with the value). An optional attribute the statement does not hold
    has its default value (``activation``'s ``scale`` is 1.0): a statement holds only the
    attributes that differ from their defaults."""
    defaults = stmt.op.attr_defaults
    for name, wanted in attrs.items():
        value = stmt.attr(name, defaults.get(name))
        if not (wanted(value) if callable(wanted) else value == wanted):
            return False
    return True


def an(word: str) -> str:
    """``word`` with its indefinite article (``an alloc``, ``a load``)."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def attrs_mismatch(stmt: Statement, attrs: Mapping[str, Any]) -> str | None:
    """Why ``stmt`` fails ``attrs`` (the first constraint it breaks), or None (``attrs_match``)."""
    defaults = stmt.op.attr_defaults
    for name, wanted in attrs.items():
        value = stmt.attr(name, defaults.get(name))
        if callable(wanted):
            if not wanted(value):
                return f"its {name} is {value!r}, which the pattern's condition on {name} refuses"
        elif value != wanted:
            return f"its {name} is {value!r}, the pattern wants {wanted!r}"
    return None


class CaptureError(TransformError, KeyError):
    """``found[name]`` for a name the pattern did not capture. Also a ``KeyError``, so
    ``name in found`` and ``found.get(name)`` work as for any mapping."""

    def __str__(self) -> str:  # its message, not ``KeyError``'s quoted one
        return shorten(str(self.args[0])) if self.args else ""


class Found(Mapping[str, int]):
    """One match of a pattern: ``root`` (a tree pattern's top statement, a set's
    earliest), ``nodes`` (every matched statement; a set's in ``axis`` order) and the
    named statements (``found["inner"]``)."""

    __slots__ = ("axis", "captures", "nodes", "root")

    def __init__(
        self, root: int, nodes: Sequence[int], captures: Mapping[str, int], axis: str | None = None
    ) -> None:
        self.root = root
        self.nodes = tuple(dict.fromkeys(nodes))
        self.captures = dict(captures)
        self.axis = axis
        """The axis a set pattern's statements are adjacent along (None for a tree)."""

    def __getitem__(self, name: str) -> int:
        try:
            return self.captures[name]
        except KeyError:
            raise CaptureError(
                f"the pattern captured no statement named {name!r} (captured: {sorted(self.captures)})"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.captures)

    def __len__(self) -> int:
        return len(self.captures)

    def __repr__(self) -> str:
        named = ", ".join(f"{name}={node}" for name, node in self.captures.items())
        return f"Found(root={self.root}, nodes={list(self.nodes)}{', ' + named if named else ''})"


class Pattern:
    """A tree pattern over producers (see the module docstring)."""

    __slots__ = ("attrs", "capture", "op", "operands", "where")

    def __init__(
        self,
        op_name: str | None = None,
        /,
        *operands: Pattern | None,
        capture: str | None = None,
        where: Where | None = None,
        **attrs: Any,
    ) -> None:
        for operand in operands:
            if operand is not None and not isinstance(operand, Pattern):
                raise TransformError(f"an operand pattern must be a Pattern or None, got {operand!r}")
        if capture is not None and (not isinstance(capture, str) or not capture.isidentifier()):
            raise TransformError(f"Pattern({op_name!r}): capture must be a name (a str), got {capture!r}")
        if where is not None and not callable(where):
            raise TransformError(
                f"Pattern({op_name!r}): where must be a function (program, node) -> bool, got {where!r}"
            )
        op = checked_op("Pattern", op_name, attrs)
        if op is not None and len(operands) > len(op.read_positions) + len(op.write_positions):
            raise TransformError(
                f"Pattern({op_name!r}): {len(operands)} operand patterns, but {op_name} reads at most "
                f"{len(op.read_positions) + len(op.write_positions)} operands"
            )
        self.op = op_name
        self.operands = operands
        self.capture = capture
        self.where = where
        self.attrs = attrs
        names = self.capture_names()
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise TransformError(f"{self!r}: capture names used twice: {', '.join(twice)}")

    def capture_names(self) -> list[str]:
        """The capture names of this pattern and its sub-patterns, root first."""
        own = [self.capture] if self.capture is not None else []
        return own + [name for o in self.operands if o is not None for name in o.capture_names()]

    @property
    def depth(self) -> int:
        """Statements from the root to the deepest sub-pattern (1: the root alone)."""
        return 1 + max((o.depth for o in self.operands if o is not None), default=0)

    def roots(self, program: Program) -> Sequence[int]:
        """The statements a match may start at (by the index when the op is given)."""
        return program.statements_of(self.op) if self.op is not None else program.ids

    def at(self, program: Program, node: int) -> Found | None:
        """The match rooted at ``node``, or None."""
        nodes: list[int] = []
        captures: dict[str, int] = {}
        if not self._matches(program, node, nodes, captures):
            return None
        return Found(node, nodes, captures)

    def find(self, program: Program) -> list[Found]:
        """Every match, by root in program order."""
        return [found for node in self.roots(program) if (found := self.at(program, node)) is not None]

    def mismatch(self, program: Program, node: int) -> str | None:
        """Why the pattern does not match at ``node`` (the first constraint that fails,
        the sub-pattern's operand path included), or None when it matches (``at``)."""
        stmt = program[node]
        if self.op is not None and stmt.op.name != self.op:
            return f"statement {node} is {an(stmt.op.name)}, the pattern wants {an(self.op)}"
        wrong = attrs_mismatch(stmt, self.attrs)
        if wrong is not None:
            return f"statement {node}: {wrong}"
        if self.where is not None and not self.where(program, node):
            return f"statement {node} fails the pattern's where condition"
        positions = [position for position, _ in stmt.read_items()]
        if len(self.operands) > len(positions):
            return f"statement {node} reads {len(positions)} operands, the pattern has {len(self.operands)}"
        producers = program.producers(node)
        for index, (sub, position) in enumerate(zip(self.operands, positions, strict=False)):
            if sub is None:
                continue
            sources = sorted({src for src, at in producers if at == position}, key=program.order_key)
            if len(sources) != 1:
                who = "no statement (a parameter)" if not sources else f"{len(sources)} statements {sources}"
                wanted = f"({sub.op or 'any op'})"
                return f"statement {node}'s operand {index} comes from {who}, the pattern wants one {wanted}"
            deeper = sub.mismatch(program, sources[0])
            if deeper is not None:
                return f"statement {node}'s operand {index}: {deeper}"
        return None

    def _matches(self, program: Program, node: int, nodes: list[int], captures: dict[str, int]) -> bool:
        stmt = program[node]
        if (self.op is not None and stmt.op.name != self.op) or not attrs_match(stmt, self.attrs):
            return False
        if self.where is not None and not self.where(program, node):
            return False
        nodes.append(node)
        if self.capture is not None:
            captures[self.capture] = node
        if not self.operands:
            return True
        positions = [position for position, _ in stmt.read_items()]
        if len(self.operands) > len(positions):
            return False
        producers = program.producers(node)
        for sub, position in zip(self.operands, positions, strict=False):
            if sub is None:
                continue
            sources = {src for src, at in producers if at == position}
            if len(sources) != 1 or not sub._matches(program, sources.pop(), nodes, captures):
                return False
        return True

    def __repr__(self) -> str:
        parts = [repr(self.op)] if self.op is not None else []
        parts += ["_" if o is None else repr(o) for o in self.operands]
        parts += [f"{k}={v!r}" for k, v in self.attrs.items()]
        if self.capture is not None:
            parts.append(f"capture={self.capture!r}")
        return f"Pattern({', '.join(parts)})"
