"""Loop rolling: fold repeated groups of straight-line code into ``for`` loops.

The roller works bottom-up on the list of units. For the smallest period ``p`` (in
units) at which keys repeat, it takes each stretch where ``key[i] == key[i + p]``,
cuts it into blocks of ``p`` units at every phase, describes the blocks
(:mod:`.blocks`) and looks for affine boxes among blocks with equal signatures
(:mod:`.boxes`); the phase that saves most lines wins. Each box becomes one loop (two
nested loops for a 2-D box) whose body is the first block with generalised
constants. Then it starts again on the shorter list, so K loops roll first, then rows
of output tiles, then the rows themselves. A rotating pool's slot index need only be
affine modulo the pool's count (``psum[(i0 + 2) % 4]``).

Since a fold that rewrites later code starts the search again, the roller remembers
what does not change: each unit's key and description (:class:`.blocks.Descriptions`)
and, per period, which stretches it found nothing in (:mod:`.sweeps`); the unit list
keeps the periods and each buffer's users up to date as folds replace units
(:mod:`.unit_list`). A restart looks only at the stretches near the units that changed
(and those the last try of a period did not reach), so rolling takes time in
proportion to the units it folds and rewrites, not to the passes times the length of
the list.

Tiles a loop allocates that later code still reads are collected into a list
(``tensor_0_tiles = []`` before the loop, ``tensor_0_tiles.append(tensor_0)`` inside)
and the later code indexes the list. Code that does not repeat stays straight-line.

Example (a 2 x 2 tiled matmul, K = 2)::

    for i0 in range(2):
        for i1 in range(2):
            tensor_2 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            for i2 in range(2):
                tensor_0 = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=tensor_0, src=a[128 * i2:128 * i2 + 128, 128 * i0:128 * i0 + 128])
                ...
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from .blocks import Description, Descriptions, Substitution, instr_key, rewrite_refs, substitute
from .boxes import Box, find_boxes
from .ir import Affine, Family, Group, Loop, Ref, Tile, Unit
from .names import NameTable
from .sweeps import Sweep
from .unit_list import UnitList

Placement = tuple[int, Box]
"""A box at an absolute unit position."""


class Roller:
    """Rolls the units of one kernel; ``names`` hands out the lists' names."""

    def __init__(self, names: NameTable) -> None:
        self.names = names
        self._next_loop = 0
        self._keys: dict[int, tuple[Unit, int]] = {}
        self._interned: dict[Hashable, int] = {}
        self._descriptions = Descriptions()
        self._sweeps: dict[int, Sweep] = {}

    # -- keys -------------------------------------------------------------------------
    def key(self, unit: Unit) -> int:
        """An integer standing for the unit's literal skeleton."""
        hit = self._keys.get(id(unit))
        if hit is not None and hit[0] is unit:
            return hit[1]
        raw: Hashable
        if isinstance(unit, Group):
            raw = ("group", unit.kind, tuple(instr_key(i) for i in unit.instrs))
        else:
            raw = ("loop", unit.count, len(unit.families), tuple(self.key(u) for u in unit.body))
        value = self._interned.setdefault(raw, len(self._interned))
        self._keys[id(unit)] = (unit, value)
        return value

    # -- driver -----------------------------------------------------------------------
    def roll(self, units: Sequence[Unit]) -> list[Unit]:
        """``units`` with every regular repetition folded into loops: a pass tries the
        periods in ascending order and ends with the first that folds; passes repeat
        until none folds."""
        listed = UnitList(units, self.key)
        while any(self._roll_period(listed, period) for period in listed.periods()):
            pass  # a period folded: start again from the smallest
        return listed.units

    def _roll_period(self, units: UnitList, period: int) -> bool:
        """Fold the boxes of the stretches of ``period`` from the first on, until a fold
        rewrites later code (which starts the search again); whether any folded."""
        sweep = self._sweeps.setdefault(period, Sweep())
        folds: list[tuple[int, int, Loop]] = []
        cursor = 0
        for start, end in sweep.start(units, period):
            if start < cursor:
                continue
            for at, box in self._best_phase(units.units, start, end, period):
                loop, rewrote = self._fold(units, at, period, box)
                cursor = at + box.count * period
                folds.append((at, cursor, loop))
                if rewrote:  # later code changed: look again from the smallest period
                    sweep.finish(units, cursor)
                    _replace_folded(units, folds)
                    return True
        sweep.finish(units)
        _replace_folded(units, folds)
        return bool(folds)

    def _best_phase(self, units: list[Unit], start: int, end: int, period: int) -> list[Placement]:
        """The boxes of the phase that saves most lines in the stretch ``[start, end)``."""
        best: tuple[tuple[int, int, int], list[Placement]] | None = None
        for phase in range(start, min(start + period, end)):
            blocks = (end - phase) // period
            if blocks < 2:
                break
            found = _place(units, phase, period, blocks, self._descriptions.describe)
            score = (sum(b.saved for _, b in found), -sum(b.nonzeros for _, b in found), -phase)
            if found and (best is None or score > best[0]):
                best = (score, found)
            if len(found) == 1 and found[0][1].count == blocks:
                break  # every block in one box: no other phase does better
        return [] if best is None else best[1]

    # -- folding ----------------------------------------------------------------------
    def _new_loop_id(self) -> int:
        self._next_loop += 1
        return self._next_loop

    def _fold(self, units: UnitList, at: int, period: int, box: Box) -> tuple[Loop, bool]:
        """The loop for ``box`` (the caller puts it in place of the blocks), and whether
        code after it was rewritten to use its lists."""
        blocks = [units.units[at + k * period : at + (k + 1) * period] for k in range(box.count)]
        inner = self._new_loop_id()
        outer = self._new_loop_id() if box.outer > 1 else None
        holes = [
            tuple((loop, coeff) for loop, coeff in ((inner, di), (outer, do)) if loop is not None and coeff)
            for di, do in zip(box.d_inner, box.d_outer, strict=True)
        ]
        flat = ((inner, 1),) if outer is None else ((outer, box.inner), (inner, 1))
        plan = Substitution(holes, flat, {}, {})
        span = range(at, at + box.count * period)
        created = [self._descriptions.describe(block).created for block in blocks]
        users = units.users({id(obj) for made in created for obj in made})
        outside: dict[int, tuple[Family, int, bool]] = {}
        new_families: list[Family] = []
        for position, first in enumerate(created[0]):
            instances = [made[position] for made in created]
            if not any(q not in span for obj in instances for q in users.get(id(obj), ())):
                continue
            if isinstance(first, Tile):
                family = Family(self.names.fresh(f"{first.name}_tiles"), first.shape, box.count)
                plan.collect[id(first)] = family
                outside.update({id(t): (family, k, True) for k, t in enumerate(instances)})
            else:
                family = Family(first.name, first.shape, first.size * box.count)
                plan.families[id(first)] = (family, first.size)
                outside.update({id(f): (family, k * first.size, False) for k, f in enumerate(instances)})
            new_families.append(family)
        _rewrite_outside(units, span, outside, users)
        body = substitute(blocks[0], plan)
        if outer is None:
            return Loop(inner, box.inner, body, tuple(new_families)), bool(outside)
        return Loop(outer, box.outer, (Loop(inner, box.inner, body),), tuple(new_families)), bool(outside)


def _replace_folded(units: UnitList, folds: list[tuple[int, int, Loop]]) -> None:
    """Put each fold's loop in place of its blocks ``[start, stop)``, the last first (the
    positions are those before the pass)."""
    for start, stop, loop in reversed(folds):
        units.replace(start, stop, [loop])


def _place(
    units: list[Unit], phase: int, period: int, count: int, describe: Callable[[Sequence[Unit]], Description]
) -> list[Placement]:
    """Boxes among ``count`` blocks from ``phase``, within runs of equal signatures."""
    descs: list[Description] = [
        describe(units[phase + k * period : phase + (k + 1) * period]) for k in range(count)
    ]
    found: list[Placement] = []
    run = 0
    for k in range(1, count + 1):
        if k == count or descs[k].sig != descs[run].sig:
            if k - run > 1:  # (one block makes no box)
                vectors = [d.vec for d in descs[run:k]]
                for box in find_boxes(vectors, descs[run].lines, descs[run].moduli):
                    found.append((phase + (run + box.start) * period, box))
            run = k
    return found


def _rewrite_outside(
    units: UnitList, span: range, outside: dict[int, tuple[Family, int, bool]], users: dict[int, list[int]]
) -> None:
    """Point code after a loop at the lists that now hold the loop's tiles."""
    if not outside:
        return

    def change(ref: Ref) -> Ref | None:
        hit = outside.get(id(ref.base))
        if hit is None:
            return None
        family, offset, is_tile = hit
        if is_tile:
            return Ref(family, ref.slices, Affine(offset))
        assert ref.index is not None
        return Ref(family, ref.slices, ref.index.plus(offset))

    positions = sorted({q for ident in outside for q in users.get(ident, ()) if q not in span})
    for q in positions:
        units.replace(q, q + 1, [rewrite_refs(units.units[q], change)])
