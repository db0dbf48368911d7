"""The op protocol: everything a transform, verifier, interpreter or backend needs to
know about one kind of statement lives on its op singleton.

An op declares its operands (``operand_names``, which positions it reads and writes),
an axis label per operand dimension (``nc_matmul``: lhs ``(K, M)``, rhs ``(K, N)``,
dst ``(M, N)``), its attributes, its output shape and numpy semantics, the engine it
runs on, and how it prints. Limits are looked up on the target by ``(op name, axis)``,
so the same op serves Trainium and Tenstorrent.

An operand dimension labelled ``BROADCAST`` has size 1 and is spread over the other
operands' axis in that position (the ``[P, 1]`` column of ``tensor_scalar(x, column)``):
it joins no other axis and is never reduced. Ops that print alike but differ in their
operands (``tensor_scalar(x, 0.5)`` and ``tensor_scalar(x, column)``) share a
``text_name``; the parser tells them apart by their tensor arguments.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from nkigym_graph.ir.literals import format_literal
from nkigym_graph.ir.statement import Attrs, Statement
from nkigym_graph.ir.targets import Target

OperandText = Callable[[int], str]
"""Renders operand ``position`` of the statement being printed."""

ON_CHIP_ITEMSIZE = 4
"""Bytes per element assumed for on-chip tiles when bounding free sizes (fp32)."""

BROADCAST = "broadcast"
"""Axis label of a size-1 operand dimension spread over the other operands' axis."""


class ShapeError(ValueError):
    """Operand shapes an op cannot accept; the message says why."""


_LARGEST_FLOAT = sys.float_info.max
"""Integer attributes beyond this have no float value (the ops compute in floats)."""


class Op:
    """Base class of the op singletons. Subclasses set the class attributes."""

    name: str = ""
    text_name: str = ""
    """The name it prints with (``nkigym.<text_name>(...)``); empty: ``name``."""
    operand_names: tuple[str, ...] = ()
    read_positions: tuple[int, ...] = ()
    write_positions: tuple[int, ...] = ()
    axes: tuple[tuple[str, ...], ...] = ()
    """Axis label of each dimension of each operand, by position."""
    positional_attrs: tuple[str, ...] = ()
    """Attributes printed positionally after the tensor operands."""
    keyword_attrs: tuple[str, ...] = ()
    """Attributes printed as keywords, in this order."""
    attr_choices: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    """For attributes restricted to names: the accepted names."""
    attr_defaults: ClassVar[Mapping[str, Any]] = {}
    """Optional attributes and their values when absent; a statement holds (and prints)
    only the ones that differ from their default."""
    number_attrs: frozenset[str] = frozenset()
    """Attributes that must be numbers (ints or floats)."""
    finite_attrs: frozenset[str] = frozenset()
    """Number attributes that must moreover be finite (not inf or nan)."""
    engine: str = "none"
    """Where it runs: ``dma``, ``tensor``, ``vector``, ``scalar`` or ``none``."""
    result_keeps_input_dtype: bool = False
    """Whether the result has its input's dtype wherever it lives (a load its parameter's;
    a Tensor Engine transpose writes PSUM in the input dtype, where a matmul accumulates fp32)."""
    on_chip_positions: tuple[int, ...] = ()
    """Operands that live in on-chip memory (their free size is bounded by SBUF)."""

    # -- attributes -------------------------------------------------------------------
    def check_attrs(self, attrs: Attrs) -> str | None:
        """Why ``attrs`` are not acceptable, or None."""
        names = {k for k, _ in attrs}
        expected = set(self.positional_attrs) | set(self.keyword_attrs)
        if names - expected:
            return f"unknown attribute(s) {sorted(names - expected)}; {self.text} takes {sorted(expected)}"
        if expected - names - set(self.attr_defaults):
            return f"missing attribute(s) {sorted(expected - names - set(self.attr_defaults))}"
        for key, value in attrs:
            choices = self.attr_choices.get(key)
            if choices is not None and (not isinstance(value, Hashable) or value not in choices):
                return f"{key}={value!r} is not one of {sorted(choices)}"
            if key in self.number_attrs and (isinstance(value, bool) or not isinstance(value, int | float)):
                return f"{key} must be a number, got {value!r}"
            if key in self.number_attrs and isinstance(value, int) and abs(value) > _LARGEST_FLOAT:
                return f"{key} must be a number a float can hold, got an integer of {value.bit_length()} bits"
            if key in self.finite_attrs and not math.isfinite(value):
                return f"{key} must be a finite number, got {value!r}"
        return None

    def canonical_attrs(self, attrs: Attrs) -> Attrs:
        """``attrs`` without the optional ones that equal their default (how a statement
        holds them, so equal statements compare and hash equal)."""
        defaults = self.attr_defaults
        if not defaults:
            return attrs
        return tuple((k, v) for k, v in attrs if not (k in defaults and _same_value(v, defaults[k])))

    def attr_values(self, attrs: Attrs) -> dict[str, Any]:
        """Every attribute's value, the defaults of absent optional ones included."""
        return {**self.attr_defaults, **dict(attrs)}

    @property
    def text(self) -> str:
        """The name the op prints with."""
        return self.text_name or self.name

    # -- shapes and semantics ---------------------------------------------------------
    def output_shape(self, read_shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...]:
        """Shape of the destination given the read operands' shapes; ShapeError if invalid."""
        raise NotImplementedError

    def compute(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray:
        """The op's numpy semantics on the read operands (in ``read_positions`` order)."""
        raise NotImplementedError

    def constant_result(self, attrs: Attrs, position: int, value: float) -> float | None:
        """The value of every element of the result when every element of read operand
        ``position`` is ``value``, whatever (finite) values the other operands hold; None
        when it depends on them. Tiling skips work on tiles known to be constant (a fully
        masked tile and what follows from it: ``nkigym_graph.tiling.masking``)."""
        return None

    # -- limits -----------------------------------------------------------------------
    def axis_sizes(self, stmt: Statement) -> dict[str, int]:
        """Size of each labelled axis in ``stmt`` (from its operands' slices)."""
        sizes: dict[str, int] = {}
        for labels, operand in zip(self.axes, stmt.operands, strict=False):
            for label, (start, stop) in zip(labels, operand.slices, strict=False):
                sizes[label] = max(sizes.get(label, 0), stop - start)
        return sizes

    def limit(self, axis: str, target: Target) -> int | None:
        """Largest size of ``axis`` on ``target`` (free axes of on-chip tiles: SBUF capacity)."""
        explicit = target.limit(self.name, axis)
        if explicit is not None:
            return explicit
        if axis == "free" and self.on_chip_positions:
            return target.sbuf_bytes_per_partition // ON_CHIP_ITEMSIZE
        return None

    def limit_violations(self, stmt: Statement, target: Target) -> list[str]:
        """Human-readable limit violations of ``stmt`` on ``target`` (empty if within limits)."""
        out = []
        for axis, size in self.axis_sizes(stmt).items():
            bound = self.limit(axis, target)
            if bound is not None and size > bound:
                out.append(f"{self.name} {axis} is {size} > {bound} on {target.name}")
        return out

    def can_merge_dim(self, axis: str, new_size: int, target: Target) -> bool:
        """Whether growing ``axis`` to ``new_size`` by a merge respects ``target``'s limits."""
        bound = self.limit(axis, target)
        return bound is None or new_size <= bound

    def mergeable_axes(self) -> frozenset[str]:
        """Axes along which two statements may merge: those the destination carries."""
        return frozenset(self.axes[self.write_positions[0]]) if self.write_positions else frozenset()

    # -- printing ---------------------------------------------------------------------
    def format_args(self, stmt: Statement, operand: OperandText) -> str:
        """The argument list of the call form: read operands, positional then keyword attrs."""
        attrs = stmt.attr_map
        parts = [operand(p) for p in self.read_positions]
        parts += [format_literal(attrs[k]) for k in self.positional_attrs]
        parts += [f"{k}={format_literal(attrs[k])}" for k in self.keyword_attrs if k in attrs]
        return ", ".join(parts)

    def format(self, stmt: Statement, operand: OperandText, dst: str) -> str:
        """The statement's line: ``dst = nkigym.name(args)`` or ``dst[...] += ...``."""
        assign = "+=" if stmt.accumulate else "="
        return f"{dst} {assign} nkigym.{self.text}({self.format_args(stmt, operand)})"

    def __repr__(self) -> str:
        return f"<op {self.name}>"

    def __reduce__(self) -> str | tuple[Any, ...]:
        # Singletons pickle by name (for process pools), so identity survives.
        from nkigym_graph.ir.ops import registry

        return (registry.get_op, (self.name,))


def _same_value(value: Any, default: Any) -> bool:
    """``value == default`` for numbers of either type (``1`` and ``1.0``), strictly otherwise."""
    if isinstance(value, bool) or isinstance(default, bool):
        return value is default
    return type(value) in (int, float) and type(default) in (int, float) and value == default


def same_shape(shapes: Sequence[tuple[int, ...]], what: str) -> tuple[int, ...]:
    """The common shape of ``shapes``; ShapeError naming ``what`` if they differ."""
    first = shapes[0]
    for other in shapes[1:]:
        if other != first:
            raise ShapeError(f"{what} shapes differ: {first} vs {other}")
    return first
