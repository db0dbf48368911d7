"""What weight_stitch refuses, and the messages that say why."""

from __future__ import annotations

import numpy as np
import pytest
from stitching.stitch_programs import W, random_inputs, weights_program

import nkigym_graph as ng
from nkigym_graph.errors import TransformError
from nkigym_graph.stitching import (
    StitchError,
    find_weights,
    parse_stitched_name,
    stitch_inputs,
    stitch_program,
    stitched_name,
    stitching_of,
)
from nkigym_graph_plugins.weight_stitch import WeightStitch

# w1's tile also feeds an activation, so w1 is not only a matmul weight.
SHARED_TILE = """
def f(x, w1, w2):
    output = nkigym.ndarray((32, 96), dtype=np.float32)
    tensor_0 = x[0:32, 0:32]
    tensor_1 = w1[0:32, 0:32]
    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    output[0:32, 0:32] = tensor_2
    tensor_3 = w2[0:32, 0:32]
    tensor_4 = nkigym.nc_matmul(tensor_0, tensor_3)
    output[0:32, 32:64] = tensor_4
    tensor_5 = nkigym.activation(tensor_1, op="exp")
    output[0:32, 64:96] = tensor_5
    return output
"""


def test_mixed_dtypes_are_not_offered_and_explained() -> None:
    program = weights_program([W("w1", 32, 32, "float32"), W("w2", 32, 64, "float16")])
    assert WeightStitch().analyze(program) == []
    text = WeightStitch().explain(program)
    assert "w1: is the only stitchable float32 weight" in text
    assert "weights of another dtype cannot share its tensor: w2 (float16)" in text
    with pytest.raises(StitchError, match=r"cannot stitch parameter 'w1'.*float32.*w2 \(float16\)"):
        stitch_program(program, ["w1", "w2"])


def test_mixed_dtypes_stitch_the_weights_that_share_one() -> None:
    program = weights_program([W("w1", 32, 32), W("w2", 32, 32, "bfloat16"), W("w3", 32, 32)])
    (match,) = WeightStitch().analyze(program)
    assert match.mentions == {"w1", "w3"}
    loads = program.loads_of("w2")
    assert "w2: is the only stitchable bfloat16 weight" in WeightStitch().explain(program, *loads)


def test_a_tile_read_outside_matmul_rhs_is_not_a_weight() -> None:
    program = ng.parse_program(SHARED_TILE, target="wormhole_b0")
    assert WeightStitch().analyze(program) == []
    rejected = find_weights(program).rejected
    assert rejected["w1"] == (
        "its tile tensor_1 (statement 2) is read as activation data (statement 8), not only as nc_matmul rhs"
    )
    assert "read as nc_matmul lhs" in rejected["x"]
    assert rejected["w2"].startswith("is the only stitchable float32 weight")


def test_width_must_be_whole_tiles_on_tenstorrent() -> None:
    program = weights_program([W("w1", 32, 32), W("w2", 32, 48), W("w3", 32, 64)], target=ng.WORMHOLE_B0)
    assert find_weights(program).rejected["w2"] == (
        "width 48 is not a multiple of the stitching tile width 32 on wormhole_b0"
    )
    (match,) = WeightStitch().analyze(program)
    assert match.mentions == {"w1", "w3"}


def test_names_that_cannot_be_part_of_a_stitched_name() -> None:
    program = weights_program([W("w__1", 32, 32), W("w2_", 32, 32), W("w3", 32, 32)])
    rejected = find_weights(program).rejected
    assert "cannot be part of a stitched name" in rejected["w__1"]
    assert "cannot be part of a stitched name" in rejected["w2_"]
    assert WeightStitch().analyze(program) == []
    with pytest.raises(StitchError, match="cannot be part of a stitched name"):
        stitched_name([("w__1", (32, 32)), ("w3", (32, 32))])


def test_stitched_names_parse_back_or_are_rejected() -> None:
    layout = (("a_2x3", (5, 64)), ("b", (7, 32)))
    assert parse_stitched_name(stitched_name(layout)) == layout
    for name in (
        "stitched__a_5x64",
        "stitched__a_5x64__a_7x32",
        "stitched__a_0x64__b_1x32",
        "w__a_1x1__b_1x1",
    ):
        assert parse_stitched_name(name) is None


def test_saturation_applies_it_one_rewrite_at_a_time() -> None:
    program = weights_program([W("w1", 32, 32), W("w2", 32, 32)])
    steps = list(ng.saturate_steps(program, [WeightStitch()]))
    assert [batch.count for batch, _ in steps] == [1]
    stitched = steps[-1][1]
    assert len(stitched.params) == len(program.params) - 1
    assert ng.saturate(weights_program([W("w1", 32, 32)]), [WeightStitch()]).params[1].name == "w1"


def test_a_match_from_another_program_is_refused() -> None:
    program = weights_program([W("w1", 32, 32), W("w2", 32, 32)])
    other = weights_program([W("w1", 32, 32), W("w2", 32, 64)])
    (match,) = WeightStitch().analyze(program)
    with pytest.raises(TransformError, match="was found in another program"):
        ng.apply(other, WeightStitch(), match)


def test_stitch_program_names_unknown_and_single_weights() -> None:
    program = weights_program([W("w1", 32, 32), W("w2", 32, 32)])
    with pytest.raises(StitchError, match=r"no such parameter"):
        stitch_program(program, ["w1", "nope"])
    with pytest.raises(StitchError, match="two or more weights"):
        stitch_program(program, ["w1"])
    with pytest.raises(StitchError, match="cannot stitch parameter 'x': its tile"):
        stitch_program(program, ["x", "w1"])


def test_stitch_inputs_needs_every_weight_with_its_shape(rng: np.random.Generator) -> None:
    program = weights_program([W("w1", 32, 32), W("w2", 64, 32)])
    after = stitch_program(program, ["w1", "w2"])
    inputs = random_inputs(program, rng)
    with pytest.raises(StitchError, match=r"needs the input\(s\) \['w2'\]"):
        stitch_inputs(after, {"x": inputs["x"], "w1": inputs["w1"]})
    with pytest.raises(StitchError, match="do not have the shapes"):
        stitch_inputs(after, {**inputs, "w2": inputs["w2"][:32]})


def test_a_parameter_named_like_a_stitched_tensor_must_have_its_shape() -> None:
    program = weights_program([W("w1", 32, 32), W("w2", 32, 32)])
    after = stitch_program(program, ["w1", "w2"])
    wrong = after.replace(params=[after.params[0], after.params[1]._replace(shape=(32, 96))])
    with pytest.raises(StitchError, match=r"has shape \(32, 96\).*give \(32, 64\)"):
        stitching_of(wrong)
