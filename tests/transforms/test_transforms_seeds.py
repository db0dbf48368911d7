"""Every before/after example of seeds 000 (operand merge) and 001 (free-dimension merge)."""

from __future__ import annotations

import pytest
from support import normalized_lines, seed_text

import nkigym_graph as ng

PAIRS = [
    ("operand_merge", "000_loads_free", ng.parse_fragment),
    ("operand_merge", "000_loads_partition", ng.parse_fragment),
    ("operand_merge", "000_matmul_rhs", ng.parse_fragment),
    ("operand_merge", "000_matmul_lhs", ng.parse_fragment),
    ("operand_merge", "000_stores_free", ng.parse_fragment),
    ("operand_merge", "000_stores_partition", ng.parse_fragment),
    ("free_dim_merge", "001_loads", ng.parse_fragment),
    ("free_dim_merge", "001_program", ng.parse_program),
]


@pytest.mark.parametrize(("transform", "example", "parse"), PAIRS)
def test_before_becomes_after(transform: str, example: str, parse) -> None:
    before = parse(seed_text(f"{example}_before"))
    after = parse(seed_text(f"{example}_after"))
    matches = ng.analyze(before, transform)
    assert len(matches) == 1, [str(m) for m in matches]
    result = ng.apply(before, transform, matches[0])
    assert result.canonical_hash == after.canonical_hash
    assert normalized_lines(result.to_source()) == normalized_lines(after.to_source())


def test_seed_001_full_program_text_is_reproduced() -> None:
    before = ng.parse_program(seed_text("001_program_before"))
    (match,) = ng.analyze(before, "free_dim_merge")
    result = ng.apply(before, "free_dim_merge", match)
    assert normalized_lines(str(result)) == normalized_lines(seed_text("001_program_after"))


@pytest.mark.parametrize(
    ("example", "nodes", "reason"),
    [
        ("000_loads_rejected", (0, 1), "load partition would be 256 > 128"),
        ("000_matmul_rejected", (0, 1), "nc_matmul N would be 640 > 512"),
        ("000_stores_rejected", (0, 1), "store partition would be 256 > 128"),
    ],
)
def test_rejected_examples_have_no_match_and_name_the_limit(example: str, nodes, reason: str) -> None:
    fragment = ng.parse_fragment(seed_text(example))
    assert ng.analyze(fragment, "operand_merge") == []
    assert reason in ng.explain(fragment, "operand_merge", *nodes)


def test_matmul_at_the_limit_is_accepted() -> None:
    fragment = ng.parse_fragment(seed_text("000_matmul_at_limit"))
    (match,) = ng.analyze(fragment, "operand_merge")
    merged = ng.apply(fragment, "operand_merge", match)
    (node,) = merged.statements_of("nc_matmul")
    assert merged[node].operands[1].slices == ((0, 128), (0, 512))
    assert "N becomes 512" in ng.explain(fragment, "operand_merge", 0, 1)


def test_explain_names_other_reasons() -> None:
    program = ng.parse_program(seed_text("001_program_before"))
    assert "different ops" in ng.explain(program, "operand_merge", 1, 3)
    assert "not adjacent" in ng.explain(program, "operand_merge", 1, 5) or "differ" in ng.explain(
        program, "operand_merge", 1, 5
    )


def test_dependent_statements_are_not_merged() -> None:
    """Two stores of adjacent regions where the second's data depends on the first."""
    text = """
    def f(a):
        output = nkigym.ndarray((128, 256), dtype=np.float64)
        tensor_0 = a[0:128, 0:128]
        output[0:128, 0:128] = tensor_0
        tensor_1 = nkigym.activation(tensor_0, op="exp")
        tensor_2 = nkigym.tensor_tensor(tensor_0, tensor_1, op="add")
        tensor_3 = nkigym.activation(tensor_2, op="exp")
        tensor_4 = nkigym.activation(tensor_0, op="exp")
        output[0:128, 128:256] = tensor_3
        return output
    """
    program = ng.parse_program(text)
    activations = program.statements_of("activation")
    assert "depends on" in ng.explain(program, "operand_merge", activations[0], activations[1]) or (
        "differ" in ng.explain(program, "operand_merge", activations[0], activations[1])
    )
    for match in ng.analyze(program, "operand_merge"):
        assert not program.reaches(min(match.nodes), max(match.nodes))
