"""A program's schedule: how its statements run as a kernel, as choices that compose.

The statements of a program say *what* is computed, tile by tile; its schedule says
*how a kernel runs them*: which block loops surround them and in what order, and how
many rotating buffers each stream of tiles gets. The schedule is part of the snapshot's
value (it is hashed with it and printed with it) and is changed only by transforms
(``nkigym_graph_plugins.scheduling``), so a search explores it and replays it like any
other step. Choices, by axis name (``nkigym_graph.ir.axes``) and stream name:

``order``
    the block loops, outermost first (``("N", "K", "M")``); statements are ordered by
    the block each falls in along these axes, then by their tile within the block.
``blocks``
    block size per axis of ``order``, in elements: whole tiles of the axis, or the whole
    axis (an axis without one is blocked by its tile; ``nkigym_graph.ir.schedule_fit``).
``inner``
    the tile order inside a block (default: ``order``).
``buffers``
    rotating buffers per stream: ``load.a`` (tiles loaded from parameter ``a``),
    ``psum`` (Tensor Engine results, fp32), ``psum.bfloat16`` (transposes that keep a
    bf16 input's dtype), ``evict`` (PSUM results copied to SBUF), and one
    per computing op whose results live in SBUF (``activation``, ``tensor_tensor``, ...).
    A stream without a count gets a default (``nkigym_graph.scheduling``).
    ``Program.with_schedule`` refuses a stream no kernel of the program can have.
``ahead``
    block loops that run ahead (software pipelining): the statements of block ``b + 1``
    of such an axis that run before the next loop of ``order`` (hoisted out of it, e.g.
    the on-chip transposes of the next rows) run during block ``b`` instead, the Tensor
    Engine's feeders in the next loop's first iteration and the rest in its last
    (``nkigym_graph.scheduling.order``).

Two-level accumulation is not a schedule choice but a rewrite of the statements
(``rfactor``), since it changes what is added to what.

>>> s = Schedule.parse("order=N,K,M blocks=K:1024,N:512 buffers=load.a:8,psum:4")
>>> s.block("K"), s.buffer("psum"), s.inner
(1024, 4, ('N', 'K', 'M'))
>>> str(s)
'order=N,K,M blocks=K:1024,N:512 buffers=load.a:8,psum:4'
>>> str(s.replace(inner=("M", "K")))
'order=N,K,M blocks=K:1024,N:512 inner=M,K buffers=load.a:8,psum:4'
>>> str(Schedule.parse("order=M,N,K ahead=M"))
'order=M,N,K ahead=M'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nkigym_graph.errors import NkigymError

_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
_DIGITS = re.compile(r"^[0-9]+$")


class ScheduleError(NkigymError):
    """A schedule that is malformed, names an axis or stream the program does not have,
    does not fit the program (``nkigym_graph.ir.schedule_fit``) or the target (the message
    names the choice and the limit)."""


def _pairs(value: Mapping[str, int] | Iterable[tuple[str, int]], what: str) -> tuple[tuple[str, int], ...]:
    items = value.items() if isinstance(value, Mapping) else value
    out: dict[str, int] = {}
    for item in items:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ScheduleError(f"{what} must map names to integers, got {item!r}")
        name, number = item
        if not isinstance(name, str) or not _NAME.match(name):
            raise ScheduleError(f"{what}: {name!r} is not an axis or stream name")
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise ScheduleError(f"{what}[{name}] must be an integer >= 1, got {number!r}")
        if name in out:
            raise ScheduleError(f"{what} names {name!r} twice")
        out[name] = number
    return tuple(sorted(out.items()))


def _axes(value: Iterable[str], what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ScheduleError(f"{what} must be a sequence of axis names, got the string {value!r}")
    out = tuple(value)
    for name in out:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ScheduleError(f"{what}: {name!r} is not an axis name")
    if len(set(out)) != len(out):
        raise ScheduleError(f"{what} names an axis twice: {list(out)}")
    return out


@dataclass(frozen=True)
class Schedule:
    """The kernel-structure choices of one program (see the module docstring)."""

    order: tuple[str, ...] = ()
    blocks: tuple[tuple[str, int], ...] = ()
    inner_order: tuple[str, ...] = ()
    buffers: tuple[tuple[str, int], ...] = ()
    ahead: tuple[str, ...] = ()

    def __init__(
        self,
        order: Iterable[str] = (),
        blocks: Mapping[str, int] | Iterable[tuple[str, int]] = (),
        inner: Iterable[str] = (),
        buffers: Mapping[str, int] | Iterable[tuple[str, int]] = (),
        ahead: Iterable[str] = (),
    ) -> None:
        put = object.__setattr__
        put(self, "order", _axes(order, "order"))
        put(self, "blocks", _pairs(blocks, "blocks"))
        put(self, "inner_order", _axes(inner, "inner"))
        put(self, "buffers", _pairs(buffers, "buffers"))
        put(self, "ahead", _axes(ahead, "ahead"))

    @property
    def inner(self) -> tuple[str, ...]:
        """The tile order inside a block (``order`` unless set)."""
        return self.inner_order or self.order

    def block(self, axis: str) -> int | None:
        """The block size of ``axis`` (None: blocked by its tile)."""
        return dict(self.blocks).get(axis)

    def buffer(self, stream: str) -> int | None:
        """The buffer count of ``stream`` (None: the default)."""
        return dict(self.buffers).get(stream)

    @property
    def axes(self) -> frozenset[str]:
        """Every axis the schedule names."""
        return (
            frozenset(self.order)
            | frozenset(self.inner_order)
            | {a for a, _ in self.blocks}
            | frozenset(self.ahead)
        )

    def replace(self, **changes: Any) -> Schedule:
        """A schedule with some choices changed (``order=``, ``blocks=``, ``inner=``, ``buffers=``,
        ``ahead=``)."""
        fields: dict[str, Any] = {
            "order": self.order,
            "blocks": self.blocks,
            "inner": self.inner_order,
            "buffers": self.buffers,
            "ahead": self.ahead,
        }
        unknown = set(changes) - set(fields)
        if unknown:
            raise ScheduleError(f"a schedule has no choice(s) {sorted(unknown)}; choices: {sorted(fields)}")
        fields.update(changes)
        return Schedule(**fields)

    def with_block(self, axis: str, size: int | None) -> Schedule:
        """This schedule with ``axis`` blocked by ``size`` (None: by its tile)."""
        blocks = {a: n for a, n in self.blocks if a != axis}
        if size is not None:
            blocks[axis] = size
        return self.replace(blocks=blocks)

    def with_buffer(self, stream: str, count: int | None) -> Schedule:
        """This schedule with ``count`` buffers for ``stream`` (None: the default)."""
        buffers = {s: n for s, n in self.buffers if s != stream}
        if count is not None:
            buffers[stream] = count
        return self.replace(buffers=buffers)

    def __str__(self) -> str:
        parts = []
        if self.order:
            parts.append("order=" + ",".join(self.order))
        if self.blocks:
            parts.append("blocks=" + ",".join(f"{a}:{n}" for a, n in self.blocks))
        if self.inner_order:
            parts.append("inner=" + ",".join(self.inner_order))
        if self.buffers:
            parts.append("buffers=" + ",".join(f"{s}:{n}" for s, n in self.buffers))
        if self.ahead:
            parts.append("ahead=" + ",".join(self.ahead))
        return " ".join(parts) or "default"

    @classmethod
    def parse(cls, text: str) -> Schedule:
        """The schedule ``str(schedule)`` printed."""
        if not isinstance(text, str):
            raise ScheduleError(f"a schedule text must be a str, got {type(text).__name__}")
        fields: dict[str, Any] = {}
        words = text.split()
        if words == ["default"]:
            return cls()
        for word in words:
            key, sep, value = word.partition("=")
            if not sep or key not in ("order", "blocks", "inner", "buffers", "ahead") or key in fields:
                raise ScheduleError(f"cannot read {word!r} in schedule {text!r}")
            items = [item for item in value.split(",") if item]
            if key in ("order", "inner", "ahead"):
                fields[key] = items
                continue
            pairs = []
            for item in items:
                name, colon, number = item.rpartition(":")
                # ASCII digits only: str.isdigit() also accepts '²', which int() refuses
                if not colon or not _DIGITS.match(number):
                    raise ScheduleError(f"cannot read {item!r} in {key} of schedule {text!r}")
                pairs.append((name, int(number)))
            fields[key] = pairs
        return cls(**fields)

    def check_axes(self, names: Iterable[str]) -> None:
        """Refuse axes the program does not have."""
        known = set(names)
        unknown = sorted(self.axes - known)
        if unknown:
            raise ScheduleError(
                f"schedule names axis {', '.join(map(repr, unknown))}, which the program does not have "
                f"(its axes: {', '.join(sorted(known))})"
            )
