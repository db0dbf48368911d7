"""Circular buffers of a tiled program, the chip limits, and the over-limit error."""

from __future__ import annotations

import numpy as np
import pytest
from stitching.stitch_programs import W, random_inputs, weights_program

import nkigym_graph as ng
from nkigym_graph.ir.ops import ACTIVATION, ALLOC, LOAD, STORE
from nkigym_graph.ir.statement import Operand, Statement, make_attrs
from nkigym_graph.ir.variables import Param
from nkigym_graph.stitching import (
    CircularBufferError,
    check_circular_buffers,
    circular_buffer_limit,
    circular_buffers,
    stitch_inputs,
    stitch_program,
)

SIXTEEN = [W(f"w{i}", 32, 32) for i in range(16)]


def test_limits_per_arch() -> None:
    assert circular_buffer_limit(ng.WORMHOLE_B0) == 32
    assert circular_buffer_limit(ng.BLACKHOLE) == 64
    assert circular_buffer_limit(ng.GRAYSKULL) == 32
    with pytest.raises(CircularBufferError, match="target trn2 has no circular buffers"):
        circular_buffer_limit(ng.TRN2)


def test_one_cb_per_input_parameter_and_output() -> None:
    count = circular_buffers(weights_program([W("w1", 64, 32), W("w2", 64, 64)], separate_outputs=True))
    (kernel,) = count.kernels
    assert kernel.inputs == ("x", "w1", "w2")
    assert kernel.outputs == ("out_w1", "out_w2")
    assert kernel.intermediates == ()
    assert (count.total, count.limit, count.arch, count.fits) == (5, 32, "wormhole_b0", True)
    assert kernel.weight_groups == (("w1", "w2"),) and kernel.stitch_savings == 1


def test_every_tile_of_a_stream_shares_one_cb() -> None:
    program = weights_program([W("w1", 128, 128)], m=64, tail="exp")
    assert len(program.statements_of("activation")) == 4
    count = circular_buffers(program)
    assert count.intermediates == 1
    (kernel,) = count.kernels
    assert kernel.intermediates[0].endswith("(nc_matmul on tensor -> activation on scalar)")


def test_only_intermediates_crossing_engines_take_a_cb() -> None:
    # matmul (tensor) -> exp (scalar) -> tanh (scalar) -> scale (vector): two crossings.
    program = ng.parse_program(
        """
def f(x, w):
    output = nkigym.ndarray((32, 32), dtype=np.float32)
    tensor_0 = x[0:32, 0:32]
    tensor_1 = w[0:32, 0:32]
    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    tensor_3 = nkigym.activation(tensor_2, op="exp")
    tensor_4 = nkigym.activation(tensor_3, op="tanh")
    tensor_5 = nkigym.tensor_scalar(tensor_4, 2.0, op="multiply")
    output[0:32, 0:32] = tensor_5
    return output
""",
        target="wormhole_b0",
    )
    assert [s.split(" ")[0] for s in circular_buffers(program).kernels[0].intermediates] == [
        "tensor_2",
        "tensor_4",
    ]


def test_a_tiled_sum_of_matmuls_keeps_its_streams_after_stitching(rng: np.random.Generator) -> None:
    def two_heads(x: ng.TracedTensor, w1: ng.TracedTensor, w2: ng.TracedTensor) -> ng.TracedTensor:
        return ng.tensor_tensor(ng.nc_matmul(x, w1), ng.nc_matmul(x, w2), op="add")

    shapes = {"x": (64, 32), "w1": (64, 64), "w2": (64, 64)}
    program = ng.tile(two_heads, shapes, dtype=np.float64, target="wormhole_b0")
    after = stitch_program(program, ["w1", "w2"])
    before_count, after_count = circular_buffers(program), circular_buffers(after)
    assert (before_count.inputs, before_count.intermediates, before_count.outputs) == (3, 2, 1)
    assert (after_count.inputs, after_count.intermediates, after_count.outputs) == (2, 2, 1)
    inputs = random_inputs(program, rng)
    expected = inputs["x"].T @ inputs["w1"] + inputs["x"].T @ inputs["w2"]
    got = ng.interpret(after, dtype=np.float64, **stitch_inputs(after, inputs))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_array_equal(got, ng.interpret(program, dtype=np.float64, **inputs))


def test_over_the_wormhole_limit_until_stitched(rng: np.random.Generator) -> None:
    program = weights_program(SIXTEEN, tail="relu")
    count = circular_buffers(program)
    assert (count.inputs, count.intermediates, count.outputs, count.total) == (17, 16, 1, 34)
    assert not count.fits and count.over_limit == count.kernels
    with pytest.raises(CircularBufferError) as caught:
        check_circular_buffers(program)
    message = str(caught.value)
    assert "kernel 'weights' needs 34 (17 inputs, 16 intermediates, 1 output) circular buffers" in message
    assert "over the limit of 32 on wormhole_b0" in message
    assert "weight_stitch transform" in message and "free 15, leaving 19, which fits" in message

    after = stitch_program(program, [w.name for w in SIXTEEN])
    fitted = check_circular_buffers(after)
    assert (fitted.inputs, fitted.intermediates, fitted.outputs, fitted.total) == (2, 16, 1, 19)
    inputs = random_inputs(program, rng)
    np.testing.assert_array_equal(
        ng.interpret(after, dtype=np.float64, **stitch_inputs(after, inputs)),
        ng.interpret(program, dtype=np.float64, **inputs),
    )


def test_the_same_program_fits_blackhole() -> None:
    count = check_circular_buffers(weights_program(SIXTEEN, tail="relu"), ng.BLACKHOLE)
    assert (count.total, count.limit, count.arch) == (34, 64, "blackhole")


def test_a_trainium_program_is_counted_against_a_named_arch() -> None:
    program = weights_program([W("w1", 128, 128), W("w2", 128, 128)], m=128, target=ng.TRN2)
    with pytest.raises(CircularBufferError, match="target trn2 has no circular buffers"):
        circular_buffers(program)
    assert circular_buffers(program, "wormhole_b0").total == 4


def test_over_the_limit_without_weights_suggests_splitting() -> None:
    stmts, params = [], []
    for i in range(17):
        src, out = f"a{i}", f"out{i}"
        params.append(Param(src, (32, 32)))
        stmts.append(Statement(ALLOC, (Operand(out, ((0, 32), (0, 32))),), make_attrs(dtype="float32")))
        stmts.append(
            Statement(LOAD, (Operand(src, ((0, 32), (0, 32))), Operand(f"t{i}", ((0, 32), (0, 32)))))
        )
        region = ((0, 32), (0, 32))
        stmts.append(
            Statement(ACTIVATION, (Operand(f"t{i}", region), Operand(f"u{i}", region)), make_attrs(op="exp"))
        )
        stmts.append(Statement(STORE, (Operand(f"u{i}", region), Operand(out, region))))
    program = ng.Program("many", params, stmts, [f"out{i}" for i in range(17)], target="wormhole_b0")
    with pytest.raises(
        CircularBufferError, match=r"needs 34 .*has no two stitchable weights: split the kernel"
    ):
        check_circular_buffers(program)
