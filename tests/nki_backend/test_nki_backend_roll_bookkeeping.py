"""Loop rolling's bookkeeping gives what a search of the whole unit list gives: the unit
list's periods and buffer users after replacements, the stretches near changed units,
the boxes of a block sequence, and, end to end, the same kernels as a roller that looks
at every stretch again on every pass."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nki_backend.nki_cases import CASES, tiled, wide_matmul

import nkigym_graph as ng
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph_plugins.nki_backend import rolling
from nkigym_graph_plugins.nki_backend.blocks import referenced
from nkigym_graph_plugins.nki_backend.boxes import MIN_PAIR_LINES, find_boxes
from nkigym_graph_plugins.nki_backend.ir import Affine, Call, Group, Ref, Tile, Unit
from nkigym_graph_plugins.nki_backend.sweeps import Sweep, stretches_from, stretches_near
from nkigym_graph_plugins.nki_backend.unit_list import UnitList

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TILES = [Tile(f"t{i}", (128, 128), "nl.float32", "sbuf", 4) for i in range(4)]


def _unit(kind: int, tile: int) -> Group:
    """A one-instruction group of skeleton ``kind`` that uses tile ``tile``."""
    ref = Ref(TILES[tile], ((Affine(0), Affine(128)), (Affine(0), Affine(128))))
    return Group(f"op{kind}", "", (Call("nisa.memset", (("dst", ref), ("value", "0.0"))),))


def _key(unit: Unit) -> int:
    assert isinstance(unit, Group)
    return int(unit.kind.removeprefix("op"))


def _gaps(keys: Sequence[int]) -> list[int]:
    """Distances from each key to the next equal one, ascending (the direct search)."""
    found = set()
    for i, key in enumerate(keys):
        after = next((j for j in range(i + 1, len(keys)) if keys[j] == key), None)
        if after is not None:
            found.add(after - i)
    return sorted(found)


def _stretches(keys: Sequence[int], period: int) -> list[tuple[int, int]]:
    """Maximal ranges where ``key[i] == key[i + period]`` for at least ``period`` i's."""
    found, run = [], []
    for i in range(len(keys) - period + 1):
        if i < len(keys) - period and keys[i] == keys[i + period]:
            run.append(i)
            continue
        if len(run) >= period:
            found.append((run[0], run[-1] + 1 + period))
        run = []
    return found


units_specs = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40)
new_units = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), min_size=1, max_size=3)
edits = st.lists(st.tuples(st.integers(0, 39), st.integers(1, 6), new_units))


@SETTINGS
@given(units_specs, edits)
def test_unit_list_keeps_periods_and_users_through_replacements(
    specs: list[tuple[int, int]], changes: list[tuple[int, int, list[tuple[int, int]]]]
) -> None:
    listed = UnitList([_unit(*spec) for spec in specs], _key)
    for start, width, made in changes:
        start = start % len(listed)
        stop = min(start + width, len(listed))
        listed.replace(start, stop, [_unit(*spec) for spec in made[: stop - start]])
        assert listed.keys == [_key(u) for u in listed.units]
        assert listed.labels == sorted(set(listed.labels))
        assert listed.periods() == _gaps(listed.keys)
        for tile in TILES:
            ident = id(tile)
            expected = [q for q, u in enumerate(listed.units) if ident in referenced(u)]
            assert listed.users([ident]).get(ident, []) == expected


@SETTINGS
@given(st.lists(st.integers(0, 2), max_size=40), st.integers(1, 5), st.lists(st.integers(0, 39), max_size=4))
def test_stretches_near_changes_are_every_stretch_next_to_them(
    keys: list[int], period: int, changed: list[int]
) -> None:
    every = _stretches(keys, period)
    assert list(stretches_from(keys, period)) == every
    for first in range(len(keys) + 1):
        assert list(stretches_from(keys, period, first)) == [s for s in every if s[0] >= first]
    positions = sorted({x for x in changed if x < len(keys)})
    near = [s for s in every if any(s[0] - 1 <= x <= s[1] for x in positions)]
    found = stretches_near(keys, period, positions)
    assert set(near) <= set(found) <= set(every)
    assert found == sorted(found)


def _reference_best_box(v: np.ndarray, lines: int, moduli: np.ndarray) -> tuple[int, ...] | None:
    """The box ``find_boxes`` takes first (start, inner, outer, saved, nonzeros, steps),
    by the direct search: every 1-D progression and every grid from every block."""

    def wrap(x: np.ndarray) -> np.ndarray:
        x = x.copy()
        x[..., moduli > 0] %= moduli[moduli > 0]
        return x

    count = len(v)
    if count < 2:
        return None
    diffs = wrap(np.diff(v, axis=0))
    length = [1] * count
    length[count - 2] = 2
    for i in range(count - 3, -1, -1):
        length[i] = length[i + 1] + 1 if np.array_equal(diffs[i], diffs[i + 1]) else 2
    zero = np.zeros(v.shape[1], dtype=np.int64)
    candidates = []

    def add(start: int, inner: int, outer: int, d_outer: np.ndarray) -> None:
        saved = (inner * outer - 1) * lines - (1 if outer == 1 else 2)
        nonzeros = int(np.count_nonzero(diffs[start]) + np.count_nonzero(d_outer))
        steps = (*diffs[start].tolist(), *d_outer.tolist())
        candidates.append(
            ((saved, -(outer > 1), -nonzeros, -start), (start, inner, outer, saved, nonzeros, *steps))
        )

    for i in range(count - 1):
        if i == 0 or length[i - 1] != length[i] + 1:
            add(i, length[i], 1, zero)
    for width in sorted({length[i] for i in range(count - 1)}):
        for start in range(count - 2 * width + 1):
            if length[start] < width:
                continue
            rows, d_outer = 1, None
            while start + (rows + 1) * width <= count:
                row = start + rows * width
                if length[row] < width or not np.array_equal(diffs[row], diffs[start]):
                    break
                step = wrap(v[row] - v[row - width])
                if d_outer is not None and not np.array_equal(step, d_outer):
                    break
                d_outer, rows = step, rows + 1
            if d_outer is not None:
                add(start, width, rows, d_outer)
    box = max(candidates, key=lambda c: c[0])[1]
    inner, outer, saved = box[1:4]
    return box if saved > 0 and (inner * outer >= 3 or lines >= MIN_PAIR_LINES) else None


@st.composite
def block_vectors(draw: st.DrawFn) -> list[list[int]]:
    """Vectors of grids of blocks (rows of ``inner`` blocks), with odd blocks in between."""
    dim = draw(st.integers(0, 3))
    steps = st.lists(st.sampled_from([0, 1, 2, 128, 512, -1]), min_size=dim, max_size=dim)
    vectors: list[list[int]] = []
    for _ in range(draw(st.integers(1, 4))):
        inner, outer = draw(st.integers(1, 6)), draw(st.integers(1, 4))
        d_inner, d_outer, base = draw(steps), draw(steps), draw(steps)
        vectors += [
            [b + r * o + c * i for b, i, o in zip(base, d_inner, d_outer, strict=True)]
            for r in range(outer)
            for c in range(inner)
        ]
        vectors += draw(st.lists(st.lists(st.integers(0, 3), min_size=dim, max_size=dim), max_size=2))
    return vectors


@SETTINGS
@given(block_vectors(), st.integers(1, 5), st.booleans())
def test_find_boxes_takes_the_box_the_direct_search_takes(
    vectors: list[list[int]], lines: int, wrapped: bool
) -> None:
    dim = len(vectors[0])
    moduli = np.asarray([4 if wrapped and d % 2 == 0 else 0 for d in range(dim)], dtype=np.int64)
    found = find_boxes(vectors, lines, moduli.tolist())
    array = np.asarray(vectors, dtype=np.int64).reshape(len(vectors), -1)
    expected, lo, hi = [], 0, len(vectors)
    pending = [(lo, hi)]
    while pending:  # boxes are chosen best first, then the rest on either side
        lo, hi = pending.pop()
        box = _reference_best_box(array[lo:hi], lines, moduli)
        if box is not None:
            start = lo + box[0]
            expected.append((start, *box[1:]))
            pending += [(lo, start), (start + box[1] * box[2], hi)]
    actual = [(b.start, b.inner, b.outer, b.saved, b.nonzeros, *b.d_inner, *b.d_outer) for b in found]
    assert actual == sorted(expected)


class _Rescan(Sweep):
    """A sweep that forgets what it found: every pass looks at every stretch again."""

    def start(self, units: UnitList, period: int) -> Iterator[tuple[int, int]]:
        self.frontier, self.carried, self.seen = -1, [], len(units.changed)
        return super().start(units, period)


def _programs() -> list[tuple[str, ng.Program]]:
    transforms = [ng.get_transform(n) for n in ("data_reuse", "operand_merge", "dead_code")]
    reuse = [ng.get_transform(n) for n in ("data_reuse", "dead_code")]
    return [
        ("tiled_512", tiled_matmul(512, 512, 512)),
        ("tiled_300_tanh", tiled_matmul(300, 256, 300, tail="tanh")),
        ("saturated_1024", ng.saturate(tiled_matmul(1024, 1024, 1024), transforms)),
        ("reuse_1024_bf16", ng.saturate(tiled_matmul(1024, 512, 1024, dtype="bfloat16"), reuse)),
        ("wide_split", wide_matmul(2048, 2560, 512)),
        *((c.id, tiled(c, saturate=s)) for c in CASES[7:12] for s in (False, True)),
    ]


@pytest.mark.parametrize("name,program", _programs(), ids=lambda x: x if isinstance(x, str) else "")
def test_rolling_near_changes_equals_rolling_everything_again(
    name: str, program: ng.Program, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = ng.emit(program, backend="nki")
    monkeypatch.setattr(rolling, "Sweep", _Rescan)
    assert ng.emit(program, backend="nki") == text


def test_unit_list_random_folds_keep_the_gap_counts() -> None:
    rnd = random.Random(7)
    listed = UnitList([_unit(rnd.randrange(3), rnd.randrange(4)) for _ in range(300)], _key)
    while len(listed) > 1:
        start = rnd.randrange(len(listed))
        stop = min(len(listed), start + rnd.randint(1, 8))
        listed.replace(start, stop, [_unit(rnd.randrange(6), rnd.randrange(4))])
        assert listed.periods() == _gaps(listed.keys)
