"""saturate names why a batch failed, and check=True compares its programs numerically."""

from __future__ import annotations

import itertools
from collections.abc import Callable

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


class ChangesNothing(Transform):
    """Finds a match at every multiply whose edit leaves the program as it is."""

    name = "changes_nothing"

    def __init__(self, edit: Callable[[Program, int], Edit]) -> None:
        self.make = edit

    def analyze(self, program: Program) -> list[Match]:
        return [
            Match(self.name, (node,), self.make(program, node), program_hash=program.canonical_hash)
            for node in program.statements_of("tensor_scalar")
        ]


@pytest.mark.parametrize(
    "edit",
    [lambda program, node: Edit(), lambda program, node: Edit(replace={node: program[node]})],
    ids=["empty", "same_statement"],
)
def test_a_match_that_changes_nothing_stops_saturation_naming_the_transform(
    program: Program, edit: Callable[[Program, int], Edit]
) -> None:
    """Saturation ran such a transform for ever: it found its match again after every batch."""
    with pytest.raises(TransformError, match=r"'changes_nothing'.*left the program as it was"):
        list(itertools.islice(nkigym.saturate_steps(program, [ChangesNothing(edit)]), 5))


class Retarget(Transform):
    """Moves the program to trn1: valid, and every number the same."""

    name = "retarget"
    batched = False

    def analyze(self, program: Program) -> list[Match]:
        if program.target is nkigym.TRN1:
            return []
        return [Match(self.name, (), Edit(), detail="to trn1", program_hash=program.canonical_hash)]

    def rewrite(self, program: Program, match: Match) -> Program:
        self.check_origin(program, match)
        return program.replace(target=nkigym.TRN1)


class RenameParameter(Retarget):
    """Renames the parameter ``x`` to ``y``."""

    name = "rename_parameter"

    def analyze(self, program: Program) -> list[Match]:
        if program.params[0].name == "y":
            return []
        return [Match(self.name, (), Edit(), detail="x to y", program_hash=program.canonical_hash)]

    def rewrite(self, program: Program, match: Match) -> Program:
        return nkigym.parse_program(str(program).replace("x[", "y[").replace("(x)", "(y)"))


@pytest.mark.parametrize(
    ("transform", "message"),
    [
        (Retarget(), r"moves the program from target trn2 to trn1"),
        (RenameParameter(), r"parameters \(x -> y\)"),
    ],
)
def test_check_names_the_batch_that_changed_the_programs_interface(
    program: Program, transform: Transform, message: str
) -> None:
    """check=True let a change of target through, and a change of parameters failed with a
    SearchError from the interpreter naming neither the batch nor the transform."""
    with pytest.raises(
        TransformError, match=rf"saturation check: batch 1 \({transform.name} x1\).*{message}"
    ):
        nkigym.saturate(program, [transform], check=True)


class DictAttrs(Transform):
    """Replaces each multiply by a statement whose attrs are a dict, not a tuple of pairs."""

    name = "dict_attrs"

    def analyze(self, program: Program) -> list[Match]:
        matches = []
        for node in program.statements_of("tensor_scalar"):
            stmt = program[node]
            new = stmt._replace(attrs={**stmt.attr_map, "op": "add"})
            matches.append(
                Match(self.name, (node,), Edit(replace={node: new}), program_hash=program.canonical_hash)
            )
        return matches


def test_a_malformed_statement_in_an_edit_names_the_transform_and_the_statement(program: Program) -> None:
    """Derived snapshots took the edit's statements unchecked: saturate raised a bare
    ``TypeError: unhashable type: 'dict'`` from inside verification."""
    message = (
        r"saturation failed in 'dict_attrs': .*the statement given for statement \d+ must be a Statement"
    )
    with pytest.raises(TransformError, match=message), pytest.warns(BatchFallbackWarning):
        nkigym.saturate(program, [DictAttrs()])  # the batch fails, then its first match alone
    transform = DictAttrs()
    with pytest.raises(TransformError, match=r"dict_attrs produced an invalid program: .*attrs: tuple"):
        nkigym.apply(program, transform, transform.analyze(program)[0])
