"""saturate names why a batch failed, and check=True compares its programs numerically."""

from __future__ import annotations

import pytest

import nkigym_graph as nkigym
from nkigym_graph import Edit, Match, Program, Transform
from nkigym_graph.errors import BatchFallbackWarning, TransformError
from nkigym_graph.ir.statement import make_attrs


def scaled(x):  # type: ignore[no-untyped-def]
    return nkigym.tensor_scalar(x, 2.0, op="multiply")


@pytest.fixture
def program() -> Program:
    return nkigym.tile(scaled, {"x": (128, 256)})


class BrokenEdit(Transform):
    """Removes the first load, which a statement still reads."""

    name = "broken_edit"

    def analyze(self, program: Program) -> list[Match]:
        node = program.statements_of("load")[0]
        return [Match(self.name, (node,), Edit(remove={node}), program_hash=program.canonical_hash)]


class MultiplyToAdd(Transform):
    """Turns every multiply by a scalar into an add: valid IR, wrong numbers."""

    name = "multiply_to_add"

    def analyze(self, program: Program) -> list[Match]:
        matches = []
        for node in program.statements_of("tensor_scalar"):
            stmt = program[node]
            if stmt.attr("op") == "multiply":
                new = stmt._replace(attrs=make_attrs(**{**stmt.attr_map, "op": "add"}))
                edit = Edit(replace={node: new})
                matches.append(Match(self.name, (node,), edit, program_hash=program.canonical_hash))
        return matches


def test_a_failed_batch_says_why(program: Program) -> None:
    with pytest.raises(TransformError) as info:
        nkigym.saturate(program, [BrokenEdit()])
    message = str(info.value)
    assert "saturation failed in 'broken_edit'" in message
    assert "invalid program" in message and "batches before it: none" in message
    assert isinstance(info.value.__cause__, TransformError)


def test_the_cause_names_the_earlier_batches(program: Program) -> None:
    cause = r"'tensor_0' is not defined; batches before it: operand_merge x1"
    with pytest.raises(TransformError, match=cause):
        nkigym.saturate(program, ["operand_merge", BrokenEdit()])


def test_without_check_a_wrong_transform_goes_unnoticed(program: Program) -> None:
    result = nkigym.saturate(program, [MultiplyToAdd()])
    assert result.statements_of("tensor_scalar")


def test_check_names_the_batch_that_changed_the_numbers(program: Program) -> None:
    with pytest.raises(TransformError, match=r"saturation check: batch 1 \(multiply_to_add x2\)"):
        nkigym.saturate(program, [MultiplyToAdd()], check=True)


def test_check_passes_correct_transforms(program: Program) -> None:
    assert nkigym.saturate(program, check=True) == nkigym.saturate(program)


class ChangeOneTile(Transform):
    """Turns the multiply of one tile (columns ``start:start + 128``) into an add."""

    name = "change_one_tile"

    def __init__(self, start: int) -> None:
        self.start = start

    def analyze(self, program: Program) -> list[Match]:
        for node in program.statements_of("tensor_scalar"):
            stmt = program[node]
            load = program[program.writers_of(stmt.operands[0].var)[0]]
            if stmt.attr("op") == "multiply" and load.operands[0].slices[1][0] == self.start:
                new = stmt._replace(attrs=make_attrs(**{**stmt.attr_map, "op": "add"}))
                edit = Edit(replace={node: new})
                return [Match(self.name, (node,), edit, program_hash=program.canonical_hash)]
        return []


def test_check_compares_every_output_of_the_result() -> None:
    from nkigym_graph.numeric.equivalence import Verifier, VerifySettings

    program = nkigym.tile(scaled, {"x": (128, 128 * 32)})
    sampled = {int(c) // 128 for c in Verifier(program, VerifySettings(seed=0)).points["output"][1]}
    unsampled = min(set(range(32)) - sampled)
    wrong = ChangeOneTile(128 * unsampled)
    changed = nkigym.apply(program, wrong, wrong.analyze(program)[0])
    assert Verifier(program, VerifySettings(seed=0)).check(changed) is None  # samples miss it
    with pytest.raises(TransformError, match=r"saturation check: batch 1 \(change_one_tile x1\)"):
        nkigym.saturate(program, [wrong], check=True)


class CarelessReluFold(Transform):
    """relu(relu(x)) -> relu(x), each match built with an empty footprint: two matches in a
    chain each remove what the other forwards to, so their batch fails."""

    name = "careless_relu_fold"

    def analyze(self, program: Program) -> list[Match]:
        from nkigym_graph.rewriting.patterns import forward

        found = []
        for node in program.statements_of("activation"):
            reads = [src for src, _ in program.incoming[0][node]]
            if program[node].attr("op") == "relu" and any(
                program[src].op.name == "activation" and program[src].attr("op") == "relu" for src in reads
            ):
                edit = forward(program, node)
                if edit is not None:
                    found.append(Match(self.name, (node,), edit, program_hash=program.canonical_hash))
        return found


def relus(x):  # type: ignore[no-untyped-def]
    return nkigym.activation(nkigym.activation(nkigym.activation(x, op="relu"), op="relu"), op="relu")


def test_a_batch_that_falls_back_to_one_match_warns_naming_the_transform() -> None:
    """Saturation fell back to one match per batch without a word (the plugin's footprint
    was understated): it still ends at the same program, and now warns."""
    program = nkigym.tile(relus, {"x": (128, 128)})
    with pytest.warns(BatchFallbackWarning, match=r"careless_relu_fold: a batch of 2 .*\(reads\)"):
        folded = nkigym.saturate(program, [CarelessReluFold()], check=True)
    assert len(folded.statements_of("activation")) == 1
