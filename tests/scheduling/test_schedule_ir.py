"""Schedules as values of the IR: their text, their place in the canonical hash, their
round trip through program text, and the errors that name what is wrong."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scheduling.schedule_cases import saturated

import nkigym_graph as ng
from nkigym_graph import Schedule, ScheduleError

AXES = ["K", "M", "N"]


@st.composite
def schedules(draw: st.DrawFn) -> Schedule:
    order = draw(st.permutations(AXES))
    blocks = draw(st.dictionaries(st.sampled_from(AXES), st.integers(1, 4096), max_size=3))
    inner = draw(st.one_of(st.just([]), st.permutations(AXES)))
    streams = st.sampled_from(["psum", "load.a", "load.b", "evict"])
    buffers = draw(st.dictionaries(streams, st.integers(1, 64), max_size=4))
    ahead = draw(st.lists(st.sampled_from(AXES), max_size=2, unique=True))
    return Schedule(order=order, blocks=blocks, inner=inner, buffers=buffers, ahead=ahead)


@given(schedules())
def test_text_round_trips(schedule: Schedule) -> None:
    assert Schedule.parse(str(schedule)) == schedule
    assert hash(Schedule.parse(str(schedule))) == hash(schedule)


def test_text_is_canonical_whatever_the_order_of_its_parts() -> None:
    a = Schedule.parse("buffers=psum:2,load.a:3 blocks=N:512,K:256 order=N,K,M")
    b = Schedule.parse("order=N,K,M blocks=K:256,N:512 buffers=load.a:3,psum:2")
    assert a == b and str(a) == str(b)


@pytest.mark.parametrize(
    "text,message",
    [
        ("order=N,N", "order names an axis twice"),
        ("blocks=M:0", r"blocks\[M\] must be an integer >= 1, got 0"),
        ("bogus", "cannot read 'bogus'"),
        ("buffers=psum:-1", "cannot read 'psum:-1' in buffers"),
        # str.isdigit() holds for these, int() refuses them: a ScheduleError, not a ValueError
        ("blocks=M:\u00b2", "cannot read 'M:\u00b2' in blocks"),
        ("buffers=psum:\u2463", "cannot read 'psum:\u2463' in buffers"),
    ],
)
def test_malformed_text_is_refused_naming_the_part(text: str, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        Schedule.parse(text)


def test_an_axis_the_program_lacks_is_refused_listing_its_axes() -> None:
    program = saturated("matmul", 256, 256, 512)
    with pytest.raises(
        ScheduleError, match=r"axis 'X', which the program does not have \(its axes: K, M, N\)"
    ):
        program.with_schedule("order=X")


def test_the_schedule_is_hashed_with_the_program_and_the_structure_is_shared() -> None:
    program = saturated("matmul", 256, 256, 512)
    a = program.with_schedule("order=N,M,K")
    b = program.with_schedule("order=N,K,M")
    assert len({program.canonical_hash, a.canonical_hash, b.canonical_hash}) == 3
    assert program.structure_hash == a.structure_hash == b.structure_hash
    assert a.statements == program.statements
    assert program.with_schedule("order=N,M,K").canonical_hash == a.canonical_hash
    assert a.with_schedule(None).canonical_hash == program.canonical_hash


def test_with_schedule_leaves_the_snapshot_alone() -> None:
    program = saturated("matmul", 256, 256, 512)
    before = program.canonical_hash
    scheduled = program.with_schedule("order=N,M,K blocks=M:128")
    assert program.schedule is None and program.canonical_hash == before
    assert scheduled is not program


def test_program_text_carries_the_schedule_as_a_decorator() -> None:
    program = saturated("matmul", 256, 256, 512).with_schedule(
        "order=N,M,K blocks=M:128 inner=K,M buffers=psum:4"
    )
    text = program.to_source()
    assert text.startswith('@nkigym.schedule("order=N,M,K blocks=M:128 inner=K,M buffers=psum:4")\n')
    again = ng.parse_program(text)
    assert again.schedule == program.schedule
    assert again.canonical_hash == program.canonical_hash


def test_a_decorator_with_a_bad_schedule_is_a_parse_error_naming_it() -> None:
    text = saturated("matmul", 256, 256, 512).with_schedule("order=N,M,K").to_source()
    with pytest.raises(ng.NkigymError, match="axis twice"):
        ng.parse_program(text.replace("order=N,M,K", "order=N,N,K"))
