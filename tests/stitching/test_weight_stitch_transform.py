"""The weight_stitch transform: matches, the rewritten program, its layout and its numerics."""

from __future__ import annotations

import numpy as np
import pytest
from stitching.stitch_programs import W, random_inputs, reference, weights_program

import nkigym_graph as ng
from nkigym_graph.stitching import (
    circular_buffers,
    find_weights,
    stitch_inputs,
    stitch_weights,
    stitching_of,
    unstitch,
)
from nkigym_graph_plugins import weight_stitch
from nkigym_graph_plugins.weight_stitch import WeightStitch

THREE = [W("w1", 64, 32), W("w2", 64, 64), W("w3", 64, 96)]
STITCHED = "stitched__w1_64x32__w2_64x64__w3_64x96"


def stitched(program: ng.Program) -> ng.Program:
    (match,) = WeightStitch().analyze(program)
    return ng.apply(program, WeightStitch(), match)


def test_three_matmuls_become_one_stitched_parameter() -> None:
    program = weights_program(THREE)
    after = stitched(program)
    assert [p.name for p in program.params] == ["x", "w1", "w2", "w3"]
    assert [p.name for p in after.params] == ["x", STITCHED]
    assert after.parameter(STITCHED).shape == (64, 192)
    loads = [after[n].operands[0] for n in after.loads_of(STITCHED)]
    assert len(loads) == len(program.loads_of("w1") + program.loads_of("w2") + program.loads_of("w3"))
    assert {src.slices[1] for src in loads} == {
        (0, 32),
        (32, 64),
        (64, 96),
        (96, 128),
        (128, 160),
        (160, 192),
    }


def test_numerics_equal_in_float64(rng: np.random.Generator) -> None:
    program = weights_program(THREE, tail="tanh")
    after = stitched(program)
    inputs = random_inputs(program, rng)
    expected = ng.interpret(program, dtype=np.float64, **inputs)
    got = ng.interpret(after, dtype=np.float64, **stitch_inputs(after, inputs))
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_allclose(got, np.concatenate(reference(inputs, THREE, "tanh"), axis=1), rtol=1e-12)


def test_user_builds_the_stitched_input_with_stitch_weights(rng: np.random.Generator) -> None:
    program = weights_program(THREE)
    after = stitched(program)
    inputs = random_inputs(program, rng)
    (metadata,) = stitching_of(after).values()
    array, built = stitch_weights([(w, inputs[w]) for w in metadata.weights], tile=metadata.tile)
    assert built == metadata
    got = ng.interpret(after, dtype=np.float64, x=inputs["x"], **{STITCHED: array})
    np.testing.assert_array_equal(got, ng.interpret(program, dtype=np.float64, **inputs))
    for name, weight in unstitch(array, metadata).items():
        np.testing.assert_array_equal(weight, inputs[name])


def test_shorter_weights_are_padded_and_padding_is_never_read(rng: np.random.Generator) -> None:
    weights = [W("w1", 40, 32), W("w2", 64, 64), W("w3", 17, 32)]
    program = weights_program(weights, tail="relu")
    after = stitched(program)
    (metadata,) = stitching_of(after).values()
    assert metadata.unified_shape == (64, 128)
    assert metadata.weights["w1"].padded_shape == (64, 32)
    assert metadata.weights["w3"].original_shape == (17, 32)
    inputs = random_inputs(program, rng)
    stitched_inputs = stitch_inputs(after, inputs)
    array = stitched_inputs[next(iter(stitching_of(after)))]
    for slot in metadata.weights.values():  # poison the padding rows
        array[slot.original_shape[0] :, slot.col_start : slot.col_end] = np.nan
    got = ng.interpret(after, dtype=np.float64, **stitched_inputs)
    np.testing.assert_array_equal(got, ng.interpret(program, dtype=np.float64, **inputs))
    np.testing.assert_allclose(got, np.concatenate(reference(inputs, weights, "relu"), axis=1), rtol=1e-12)


def test_separate_outputs_and_trainium_widths(rng: np.random.Generator) -> None:
    weights = [W("wq", 128, 40), W("wk", 96, 24), W("wv", 128, 200)]
    program = weights_program(weights, m=64, separate_outputs=True, target=ng.TRN2)
    after = stitched(program)
    (metadata,) = stitching_of(after).values()
    assert metadata.tile == (1, 1) and metadata.unified_shape == (128, 264)
    inputs = random_inputs(program, rng)
    got = ng.interpret(after, dtype=np.float64, **stitch_inputs(after, inputs))
    for value, expected in zip(got, reference(inputs, weights), strict=True):
        np.testing.assert_allclose(value, expected, rtol=1e-12)


def test_cb_count_drops_by_n_minus_one() -> None:
    program = weights_program(THREE)
    before, after = circular_buffers(program), circular_buffers(stitched(program))
    assert (before.inputs, after.inputs) == (4, 2)
    assert before.total - after.total == len(THREE) - 1
    assert (before.outputs, before.intermediates) == (after.outputs, after.intermediates)


def test_layout_survives_text_round_trip_and_later_rewrites(rng: np.random.Generator) -> None:
    program = weights_program(THREE, tail="exp")
    after = stitched(program)
    parsed = ng.parse_program(str(after), target=after.target, dtype="float64")
    assert parsed == after
    assert stitching_of(parsed) == stitching_of(after)
    reused = ng.saturate(after, ["data_reuse", "dead_code"])
    assert len(reused) < len(after)
    assert stitching_of(reused) == stitching_of(after)
    inputs = random_inputs(program, rng)
    np.testing.assert_array_equal(
        ng.interpret(reused, dtype=np.float64, **stitch_inputs(reused, inputs)),
        ng.interpret(program, dtype=np.float64, **inputs),
    )


def test_a_stitched_program_offers_no_further_match() -> None:
    after = stitched(weights_program(THREE))
    assert WeightStitch().analyze(after) == []
    assert find_weights(after).rejected[STITCHED] == "is already a stitched tensor"


def test_one_match_per_dtype(rng: np.random.Generator) -> None:
    weights = [W("a", 32, 32), W("b", 32, 32, "float32"), W("c", 32, 64), W("d", 32, 32, "float32")]
    program = weights_program(weights)
    matches = WeightStitch().analyze(program)
    assert [sorted(m.mentions) for m in matches] == [["a", "c"], ["b", "d"]]
    assert not matches[0].conflicts_with(matches[1])
    once = ng.apply(program, WeightStitch(), matches[0])
    twice = ng.apply(once, WeightStitch(), WeightStitch().analyze(once)[0])
    assert sorted(stitching_of(twice)) == ["stitched__a_32x32__c_32x64", "stitched__b_32x32__d_32x32"]
    assert [p.dtype for p in twice.params] == ["float64", "float64", "float32"]
    inputs = random_inputs(program, rng)
    np.testing.assert_array_equal(
        ng.interpret(twice, dtype=np.float64, **stitch_inputs(twice, inputs)),
        ng.interpret(program, dtype=np.float64, **inputs),
    )


def test_registered_under_its_name(rng: np.random.Generator) -> None:
    added = "weight_stitch" not in ng.transforms()
    if added:
        ng.register_plugin(weight_stitch)
    try:
        assert isinstance(ng.get_transform("weight_stitch"), WeightStitch)
        program = weights_program(THREE)
        (match,) = ng.analyze(program, "weight_stitch")
        after = ng.apply(program, "weight_stitch", match)
        assert len(after.params) == 2
        assert "stitchable (float64): w1, w2, w3" in ng.explain(program, "weight_stitch")
    finally:
        if added:
            ng.unregister_plugin(weight_stitch)


@pytest.mark.parametrize("count", [2, 5])
def test_match_detail_names_every_column_range(count: int) -> None:
    weights = [W(f"w{i}", 32, 32 * (i + 1)) for i in range(count)]
    (match,) = WeightStitch().analyze(weights_program(weights))
    starts = np.cumsum([0] + [w.n for w in weights])
    for w, start, stop in zip(weights, starts, starts[1:], strict=False):
        assert f"{w.name} -> columns {start}:{stop}" in match.detail
