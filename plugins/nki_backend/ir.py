"""The kernel under construction: buffers, instructions, statement groups and loops.

Lowering produces a flat list of :class:`Group` (one per program statement, plus
allocation and eviction groups); loop rolling folds repeated groups into :class:`Loop`
units; rendering prints the result. Integers that may vary between repetitions
(slice bounds, list indices) are :class:`Affine` expressions over enclosing loops, so
a rolled body is the first repetition with its constants generalised.

Buffers are compared by identity: :class:`Tile` (an SBUF/PSUM allocation),
:class:`Hbm` (a kernel parameter or output) and :class:`Family` (a Python list of the
tiles a loop allocated, when code after the loop still reads them).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class Affine:
    """``const + sum(coeff * loop_var)``; ``terms`` are ``(loop id, coefficient)`` pairs."""

    const: int
    terms: tuple[tuple[int, int], ...] = ()

    def plus(self, const: int, terms: tuple[tuple[int, int], ...] = ()) -> Affine:
        """This expression plus ``const`` and ``terms`` (zero coefficients dropped)."""
        merged = dict(self.terms)
        for loop, coeff in terms:
            merged[loop] = merged.get(loop, 0) + coeff
        return Affine(self.const + const, tuple(sorted((k, v) for k, v in merged.items() if v)))

    def modulo(self, modulus: int) -> Affine:
        """The same expression modulo ``modulus``: constant and coefficients in ``[0, modulus)``
        (``3 * i0 + 6`` modulo 4 is ``3 * i0 + 2``), so equal residues compare equal."""
        terms = tuple((loop, coeff % modulus) for loop, coeff in self.terms if coeff % modulus)
        return Affine(self.const % modulus, terms)


@dataclass(eq=False, slots=True)
class Tile:
    """An on-chip allocation: ``name = nl.ndarray(shape, dtype=..., buffer=nl.<buffer>)``."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    """Code text of the dtype (``nl.float32``, ``a.dtype``)."""
    buffer: str
    """``sbuf`` or ``psum``."""
    itemsize: int

    @property
    def bytes_per_partition(self) -> int:
        return math.prod(self.shape[1:]) * self.itemsize


@dataclass(eq=False, slots=True)
class Hbm:
    """A kernel parameter or an output tensor in HBM."""

    name: str
    shape: tuple[int, ...]


@dataclass(eq=False, slots=True)
class Family:
    """A list of tiles that one loop allocates (``name = []`` before it, ``append`` inside)."""

    name: str
    shape: tuple[int, ...]
    """Shape of each element tile."""
    size: int


@dataclass(eq=False, slots=True)
class Pool:
    """Rotating buffers declared once: ``name = [nl.ndarray(shape, ...) for _ in range(count)]``;
    a region of slot ``i`` is ``name[i][...]`` (``Ref.index``). Slot indices are taken
    modulo ``count`` (kept as :meth:`Affine.modulo`), so a loop can rotate through the
    slots: ``psum[(i0 + 2) % 4]``."""

    name: str
    shape: tuple[int, ...]
    """Shape of each slot."""
    dtype: str
    buffer: str
    count: int
    itemsize: int

    @property
    def bytes_per_partition(self) -> int:
        return math.prod(self.shape[1:]) * self.itemsize

    def declaration(self) -> str:
        """The code that allocates the slots."""
        return (
            f"[nl.ndarray({self.shape!r}, dtype={self.dtype}, buffer=nl.{self.buffer}) "
            f"for _ in range({self.count})]"
        )


Base = Tile | Hbm | Family | Pool
Slices = tuple[tuple[Affine, Affine], ...]


@dataclass(frozen=True, slots=True)
class Ref:
    """A region of a buffer: ``base[index][slices]`` (``index`` only for an element of a
    family or a pool)."""

    base: Base
    slices: Slices
    index: Affine | None = None

    @property
    def modulus(self) -> int:
        """The pool's slot count when the index is a pool slot (taken modulo it), else 0."""
        return self.base.count if isinstance(self.base, Pool) and self.index is not None else 0


@lru_cache(maxsize=4096)
def const_slices(slices: tuple[tuple[int, int], ...]) -> Slices:
    """Integer ``(start, stop)`` pairs as constant affine slices."""
    return tuple((Affine(start), Affine(stop)) for start, stop in slices)


def whole(shape: tuple[int, ...]) -> Slices:
    """Slices covering all of ``shape``."""
    return tuple((Affine(0), Affine(size)) for size in shape)


@dataclass(frozen=True, slots=True)
class Alloc:
    """Allocate ``tile`` (and append it to ``append_to`` when a loop collects it)."""

    tile: Tile
    append_to: Family | None = None


Arg = Ref | Affine | str
"""An instruction argument: a buffer region, an integer, or literal code (``nl.tanh``)."""


@dataclass(frozen=True, slots=True)
class Call:
    """``fn(key=arg, ...)``, e.g. ``nisa.nc_matmul(dst=..., stationary=..., moving=...)``."""

    fn: str
    args: tuple[tuple[str, Arg], ...]


@dataclass(frozen=True, slots=True)
class Assign:
    """``name = code`` (an HBM output allocation)."""

    name: str
    code: str


Instr = Alloc | Call | Assign


@dataclass(frozen=True, slots=True)
class Group:
    """The instructions implementing one program statement (or one allocation/eviction).

    ``kind`` names what the group does (the op name, ``alloc``, ``evict``); ``comment``
    is printed above it (the program statement's text).
    """

    kind: str
    comment: str
    instrs: tuple[Instr, ...]
    node: int | None = None
    """The program statement it implements, when there is one."""


@dataclass(frozen=True, slots=True, eq=False)
class Loop:
    """``for i in range(count): body``; ``families`` are the lists created before it."""

    id: int
    count: int
    body: tuple[Unit, ...]
    families: tuple[Family, ...] = field(default=())


Unit = Group | Loop


def instructions(units: Sequence[Unit]) -> Iterator[Instr]:
    """Every instruction of ``units`` in program order (loop bodies once)."""
    for unit in units:
        if isinstance(unit, Group):
            yield from unit.instrs
        else:
            yield from instructions(unit.body)


def refs_of(instr: Instr) -> Iterator[Ref]:
    """The buffer regions an instruction reads or writes."""
    if isinstance(instr, Call):
        for _, arg in instr.args:
            if isinstance(arg, Ref):
                yield arg
