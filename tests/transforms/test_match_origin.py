"""A pattern match names the program it was found in by canonical hash, worked out only
when read: saturation never hashes the programs between its batches, a pickled match
carries the hash and not the program, and a search step keeps hashes, not programs."""

from __future__ import annotations

import pickle
import weakref

import nkigym_graph as ng
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.rewriting.transform import Match
from nkigym_graph.search.state import Step


def _fresh_matches(name: str) -> tuple[ng.Program, list[Match]]:
    program = tiled_matmul(256, 256, 512)
    return program, list(ng.get_transform(name).analyze(program))


def test_a_match_hashes_its_program_only_when_read() -> None:
    program, matches = _fresh_matches("operand_merge")
    assert matches and program._hash is None  # analysing did not hash the program
    assert matches[0].program_hash == program.canonical_hash
    other = tiled_matmul(256, 256, 256)
    given = Match("operand_merge", matches[0].nodes, matches[0].edit, program_hash=other.canonical_hash)
    assert given.program_hash == other.canonical_hash != matches[0].program_hash


def test_saturation_leaves_the_programs_between_batches_unhashed() -> None:
    steps = list(ng.saturate_steps(tiled_matmul(256, 256, 512), ["data_reuse", "operand_merge", "dead_code"]))
    assert len(steps) > 1
    assert all(after._hash is None for _, after in steps)


def test_a_pickled_match_carries_the_hash_not_the_program() -> None:
    program, matches = _fresh_matches("data_reuse")
    data = pickle.dumps(matches[0])
    assert len(data) < len(pickle.dumps(program)) / 4
    copy = pickle.loads(data)
    assert copy == matches[0] and copy.program_hash == program.canonical_hash


def test_a_step_keeps_hashes_so_its_programs_can_go() -> None:
    program, matches = _fresh_matches("operand_merge")
    first = matches[0]
    expected = program.canonical_hash
    program._memo.clear()  # the analysis cache (it holds the matches) lets go of them
    gone = weakref.ref(program)
    step = Step("operand_merge", ((first,),))
    del program, matches
    assert gone() is None
    assert step.matches[0].program_hash == expected
