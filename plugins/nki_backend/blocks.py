"""What makes repeated code repeated: shape keys, block descriptions and substitution.

* A unit's *key* is its literal skeleton: instruction names, keywords, literal
  arguments, tile shapes and dtypes, loop counts. Buffers and integers are left out.
* A block's *description* adds, in one fixed traversal order, the integers it uses
  (``vec``: slice bounds, list indices), the modulus each is taken in (``moduli``: a
  rotating pool's slot count for its slot index, else 0) and a signature (``sig``) of
  how it uses buffers: a buffer allocated inside the block is named by its position
  among the block's allocations, one from outside by its identity, an HBM tensor by its
  name. Blocks with equal keys and signatures differ only in ``vec``.
* Substitution rebuilds the first block with its integers generalised to affine
  expressions of the new loop indices (same traversal order, hole by hole); a pool's
  slot index stays reduced modulo its count (``psum[2]`` becomes ``psum[(i0 + 2) % 4]``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from .ir import Affine, Alloc, Assign, Base, Call, Family, Group, Hbm, Instr, Loop, Ref, Tile, Unit


def instr_key(instr: Instr) -> Hashable:
    """The literal skeleton of one instruction."""
    if isinstance(instr, Alloc):
        tile = instr.tile
        return ("alloc", tile.shape, tile.dtype, tile.buffer, instr.append_to is not None)
    if isinstance(instr, Assign):
        return ("assign", instr.name, instr.code)
    args = tuple(
        (key, ("ref", len(arg.slices)) if isinstance(arg, Ref) else "int" if isinstance(arg, Affine) else arg)
        for key, arg in instr.args
    )
    return ("call", instr.fn, args)


@dataclass(frozen=True)
class Description:
    """How one block uses buffers (``sig``), its integers (``vec``, each taken modulo
    ``moduli`` where that is not 0) and what it creates."""

    sig: tuple[Hashable, ...]
    vec: tuple[int, ...]
    moduli: tuple[int, ...]
    created: tuple[Tile | Family, ...]
    lines: int


class _Describer:
    def __init__(self) -> None:
        self.sig: list[Hashable] = []
        self.vec: list[int] = []
        self.moduli: list[int] = []
        self.local: dict[int, int] = {}
        self.created: list[Tile | Family] = []
        self.loops: dict[int, int] = {}
        self.lines = 0

    def create(self, obj: Tile | Family) -> None:
        self.local[id(obj)] = len(self.created)
        self.created.append(obj)

    def base(self, obj: Base) -> None:
        if id(obj) in self.local:
            self.sig.append(("local", self.local[id(obj)]))
        elif isinstance(obj, Hbm):
            self.sig.append(("hbm", obj.name))
        else:
            self.sig.append(("outer", id(obj)))

    def affine(self, value: Affine, modulus: int = 0) -> None:
        self.vec.append(value.const)
        self.moduli.append(modulus)
        self.sig.append(tuple((self.loops[loop], coeff) for loop, coeff in value.terms))

    def ref(self, ref: Ref) -> None:
        self.base(ref.base)
        if ref.index is not None:
            self.sig.append("index")
            self.affine(ref.index, ref.modulus)
        for lo, hi in ref.slices:
            self.affine(lo)
            self.affine(hi)

    def units(self, units: Sequence[Unit]) -> None:
        for unit in units:
            if isinstance(unit, Loop):
                self.loops[unit.id] = len(self.loops)
                for family in unit.families:
                    self.create(family)
                self.lines += 1 + len(unit.families)
                self.units(unit.body)
                continue
            self.lines += 1
            for instr in unit.instrs:
                self.lines += 1
                if isinstance(instr, Alloc):
                    self.create(instr.tile)
                    if instr.append_to is not None:
                        self.lines += 1
                        self.base(instr.append_to)
                elif isinstance(instr, Call):
                    for _, arg in instr.args:
                        if isinstance(arg, Ref):
                            self.ref(arg)
                        elif isinstance(arg, Affine):
                            self.affine(arg)


def describe(block: Sequence[Unit]) -> Description:
    """The description of a block of consecutive units."""
    walker = _Describer()
    walker.units(block)
    return Description(
        tuple(walker.sig), tuple(walker.vec), tuple(walker.moduli), tuple(walker.created), walker.lines
    )


class _UnitDescriber(_Describer):
    """Describes one unit on its own for :class:`Descriptions`: a buffer the unit does not
    create (and that is not an HBM tensor) is left as a hole (``_OUTSIDE``, its object in
    ``outside``) for the block to resolve; a loop index term it cannot resolve (a loop of
    an earlier unit) gives up (:class:`_NotLocal`)."""

    def __init__(self) -> None:
        super().__init__()
        self.outside: list[Base] = []
        self.holes: list[int] = []
        """Positions in ``sig`` of ``("local", i)`` items (to shift by the block's earlier
        allocations) and of ``_OUTSIDE`` holes, in order."""
        self.shifts: list[int] = []
        """Positions in ``sig`` of loop-term tuples that name a loop (to shift by the
        block's earlier loops)."""

    def base(self, obj: Base) -> None:
        if id(obj) in self.local:
            self.holes.append(len(self.sig))
            self.sig.append(("local", self.local[id(obj)]))
        elif isinstance(obj, Hbm):
            self.sig.append(("hbm", obj.name))
        else:
            self.holes.append(len(self.sig))
            self.outside.append(obj)
            self.sig.append(_OUTSIDE)

    def affine(self, value: Affine, modulus: int = 0) -> None:
        self.vec.append(value.const)
        self.moduli.append(modulus)
        if value.terms:
            loops = self.loops
            if any(loop not in loops for loop, _ in value.terms):
                raise _NotLocal
            self.shifts.append(len(self.sig))
            self.sig.append(tuple((loops[loop], coeff) for loop, coeff in value.terms))
        else:
            self.sig.append(())


class _NotLocal(Exception):
    """A unit's integers name a loop outside the unit."""


_OUTSIDE = ("outside",)


@dataclass(frozen=True)
class _UnitDescription:
    unit: Unit
    """Kept so that its identity (the cache key) is not reused."""
    sig: tuple[Hashable, ...]
    vec: tuple[int, ...]
    moduli: tuple[int, ...]
    created: tuple[Tile | Family, ...]
    lines: int
    loops: int
    holes: tuple[int, ...]
    shifts: tuple[int, ...]
    outside: tuple[Base, ...]


class Descriptions:
    """:func:`describe` of blocks built from descriptions of their units, each unit
    described once (units are immutable; remembered by identity, kept alive). A block's
    description is the same as :func:`describe` gives: a buffer created by an earlier
    unit of the block is local to it, loop positions and allocation positions count from
    the block's start."""

    def __init__(self) -> None:
        self._units: dict[int, _UnitDescription | None] = {}
        self._alive: list[Unit] = []

    def _unit(self, unit: Unit) -> _UnitDescription | None:
        key = id(unit)
        if key in self._units:
            return self._units[key]
        walker = _UnitDescriber()
        try:
            walker.units((unit,))
        except _NotLocal:
            self._alive.append(unit)
            self._units[key] = None
            return None
        found = _UnitDescription(
            unit,
            tuple(walker.sig),
            tuple(walker.vec),
            tuple(walker.moduli),
            tuple(walker.created),
            walker.lines,
            len(walker.loops),
            tuple(walker.holes),
            tuple(walker.shifts),
            tuple(walker.outside),
        )
        self._units[key] = found
        return found

    def describe(self, block: Sequence[Unit]) -> Description:
        """``describe(block)``."""
        parts = []
        for unit in block:
            part = self._unit(unit)
            if part is None:
                return describe(block)
            parts.append(part)
        if len(parts) == 1 and not parts[0].outside:
            part = parts[0]
            return Description(part.sig, part.vec, part.moduli, part.created, part.lines)
        sig: list[Hashable] = []
        vec: list[int] = []
        moduli: list[int] = []
        created: list[Tile | Family] = []
        local: dict[int, int] = {}
        loops = lines = 0
        for part in parts:
            here = len(sig)
            sig += part.sig
            made = len(created)
            if made or part.outside:
                outside = iter(part.outside)
                for at in part.holes:
                    item = sig[here + at]
                    if item is _OUTSIDE:
                        obj = next(outside)
                        position = local.get(id(obj))
                        sig[here + at] = ("outer", id(obj)) if position is None else ("local", position)
                    elif made:
                        sig[here + at] = ("local", item[1] + made)  # type: ignore[index]
            if loops:
                for at in part.shifts:
                    sig[here + at] = tuple((loop + loops, coeff) for loop, coeff in sig[here + at])  # type: ignore[attr-defined]
            vec += part.vec
            moduli += part.moduli
            for position, obj in enumerate(part.created, made):
                local[id(obj)] = position
            created += part.created
            loops += part.loops
            lines += part.lines
        return Description(tuple(sig), tuple(vec), tuple(moduli), tuple(created), lines)


@dataclass
class Substitution:
    """How to rebuild the first block as a loop body.

    ``holes[h]`` are the loop terms added to the ``h``-th integer; ``families`` maps a
    family merged into a wider one to ``(wider, stride)`` (its index gains
    ``stride * flat``, where ``flat`` is the flat iteration number); ``collect`` maps a
    tile to the family its allocation now appends to.
    """

    holes: Sequence[tuple[tuple[int, int], ...]]
    flat: tuple[tuple[int, int], ...]
    families: dict[int, tuple[Family, int]]
    collect: dict[int, Family]


class _Substituter:
    def __init__(self, plan: Substitution) -> None:
        self.plan = plan
        self.hole = 0

    def affine(self, value: Affine) -> Affine:
        terms = self.plan.holes[self.hole]
        self.hole += 1
        return value.plus(0, terms) if terms else value

    def ref(self, ref: Ref) -> Ref:
        index = self.affine(ref.index) if ref.index is not None else None
        if index is not None and ref.modulus:
            index = index.modulo(ref.modulus)
        slices = tuple((self.affine(lo), self.affine(hi)) for lo, hi in ref.slices)
        base: Base = ref.base
        merged = self.plan.families.get(id(base))
        if merged is not None and index is not None:
            base, stride = merged
            index = index.plus(0, tuple((loop, coeff * stride) for loop, coeff in self.plan.flat))
        return Ref(base, slices, index)

    def instr(self, instr: Instr) -> Instr:
        if isinstance(instr, Alloc):
            family = self.plan.collect.get(id(instr.tile))
            if family is None and instr.append_to is not None:
                merged = self.plan.families.get(id(instr.append_to))
                family = merged[0] if merged is not None else instr.append_to
            return Alloc(instr.tile, family)
        if isinstance(instr, Call):
            args = tuple(
                (
                    key,
                    self.ref(arg)
                    if isinstance(arg, Ref)
                    else self.affine(arg)
                    if isinstance(arg, Affine)
                    else arg,
                )
                for key, arg in instr.args
            )
            return Call(instr.fn, args)
        return instr

    def units(self, units: Sequence[Unit]) -> tuple[Unit, ...]:
        out: list[Unit] = []
        for unit in units:
            if isinstance(unit, Loop):
                kept = tuple(f for f in unit.families if id(f) not in self.plan.families)
                out.append(Loop(unit.id, unit.count, self.units(unit.body), kept))
            else:
                out.append(
                    Group(unit.kind, unit.comment, tuple(self.instr(i) for i in unit.instrs), unit.node)
                )
        return tuple(out)


def substitute(block: Sequence[Unit], plan: Substitution) -> tuple[Unit, ...]:
    """The first block rebuilt as a loop body (see :class:`Substitution`)."""
    return _Substituter(plan).units(block)


def rewrite_refs(unit: Unit, change: Callable[[Ref], Ref | None]) -> Unit:
    """``unit`` with every region ``change`` maps replaced (``None`` keeps it)."""
    if isinstance(unit, Loop):
        return Loop(unit.id, unit.count, tuple(rewrite_refs(u, change) for u in unit.body), unit.families)
    instrs = []
    for instr in unit.instrs:
        if isinstance(instr, Call):
            args = tuple(
                (key, (change(arg) or arg) if isinstance(arg, Ref) else arg) for key, arg in instr.args
            )
            instr = Call(instr.fn, args)
        instrs.append(instr)
    return Group(unit.kind, unit.comment, tuple(instrs), unit.node)


def referenced(unit: Unit) -> set[int]:
    """Identities of the buffers ``unit`` reads or writes."""
    found: set[int] = set()
    if isinstance(unit, Loop):
        for inner in unit.body:
            found |= referenced(inner)
        return found
    for instr in unit.instrs:
        if isinstance(instr, Call):
            found.update(id(arg.base) for _, arg in instr.args if isinstance(arg, Ref))
    return found
