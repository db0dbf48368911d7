"""Broadcasting ops, activation scale and bias, gelu/silu and mean: the frontend picks the
op form by shape, tiling spreads the broadcast operand, and the tiled program computes
what numpy does."""

from __future__ import annotations

import math

import numpy as np
import pytest

import nkigym_graph as nkigym
from nkigym_graph.ir.ops import ACTIVATION_BIAS, TENSOR_COLUMN, TENSOR_ROW, TENSOR_TENSOR
from nkigym_graph.tiling import OpCallError

TOL = 1e-10


def _check(func, shapes, reference, rng: np.random.Generator, **options) -> nkigym.Program:
    program = nkigym.tile(func, shapes, dtype="float64", **options)
    arrays = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    got = nkigym.interpret(program, **arrays)
    np.testing.assert_allclose(got, reference(*arrays.values()), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(func(*arrays.values()), reference(*arrays.values()), rtol=TOL, atol=TOL)
    return program


def test_column_operand_picks_tensor_column_and_prints_as_tensor_scalar(rng: np.random.Generator) -> None:
    def centre(x):
        return nkigym.tensor_tensor(x, nkigym.tensor_reduce(x, op="max"), op="subtract")

    program = _check(centre, {"x": (200, 300)}, lambda x: x - x.max(axis=1, keepdims=True), rng)
    assert len(program.statements_of("tensor_column")) == len(program.statements_of("store")) == 2 * 3
    assert {program[n].attr("op") for n in program.statements_of("tensor_tensor")} == {"maximum"}
    line = next(ln for ln in str(program).splitlines() if 'op="subtract"' in ln)
    assert "nkigym.tensor_scalar(" in line


def test_row_operand_picks_tensor_row(rng: np.random.Generator) -> None:
    def scale_columns(x, g):
        return nkigym.tensor_tensor(x, g, op="multiply")

    program = _check(scale_columns, {"x": (200, 300), "g": (1, 300)}, lambda x, g: x * g, rng)
    assert len(program.statements_of("tensor_row")) == len(program.statements_of("store"))
    # the row is loaded once per column tile, never per row block
    assert len(program.loads_of("g")) == 3


def test_broadcast_operand_first_is_swapped_for_commutative_ops(rng: np.random.Generator) -> None:
    def add_first(x, b):
        return nkigym.tensor_tensor(b, x, op="add")

    _check(add_first, {"x": (130, 140), "b": (130, 1)}, lambda x, b: b + x, rng)


def test_broadcast_operand_first_for_subtract_is_refused() -> None:
    with pytest.raises(OpCallError, match="broadcast operand must come second"):
        nkigym.tensor_tensor(np.ones((2, 1)), np.ones((2, 3)), op="subtract")


def test_tensor_scalar_with_a_tensor(rng: np.random.Generator) -> None:
    def scaled(x, c, r):
        return nkigym.tensor_scalar(nkigym.tensor_scalar(x, c, op="divide"), r, op="maximum")

    shapes = {"x": (150, 260), "c": (150, 1), "r": (1, 260)}
    _check(scaled, shapes, lambda x, c, r: np.maximum(x / c, r), rng)


@pytest.mark.parametrize("op", ["gelu", "silu", "rsqrt", "reciprocal", "square", "exp"])
def test_activation_scale_and_bias_numbers(op: str, rng: np.random.Generator) -> None:
    def f(x):
        return nkigym.activation(x, op=op, scale=0.5, bias=3.0)

    functions = {
        "gelu": lambda y: 0.5 * y * (1 + np.tanh(math.sqrt(2 / math.pi) * (y + 0.044715 * y**3))),
        "silu": lambda y: y / (1 + np.exp(-y)),
        "rsqrt": lambda y: 1 / np.sqrt(y),
        "reciprocal": lambda y: 1 / y,
        "square": np.square,
        "exp": np.exp,
    }
    _check(f, {"x": (130, 200)}, lambda x: functions[op](0.5 * x + 3.0), rng)


def test_activation_bias_column(rng: np.random.Generator) -> None:
    def f(x, b):
        return nkigym.activation(x, op="tanh", scale=2.0, bias=b)

    program = _check(f, {"x": (140, 300), "b": (140, 1)}, lambda x, b: np.tanh(2 * x + b), rng)
    assert program[program.statements_of("activation_bias")[0]].op is ACTIVATION_BIAS


def test_default_scale_and_bias_are_not_stored_or_printed() -> None:
    def f(x):
        return nkigym.activation(x, op="exp", scale=1, bias=0.0)

    program = nkigym.tile(f, {"x": (128, 128)})
    (node,) = program.statements_of("activation")
    assert program[node].attrs == (("op", "exp"),)
    assert 'nkigym.activation(tensor_0, op="exp")' in str(program)


@pytest.mark.parametrize(("rows", "cols"), [(128, 128), (200, 300), (64, 1000)])
def test_mean_over_tiles_sums_then_divides_once(rows: int, cols: int, rng: np.random.Generator) -> None:
    def mean(x):
        return nkigym.tensor_reduce(x, op="mean")

    program = _check(mean, {"x": (rows, cols)}, lambda x: x.mean(axis=1, keepdims=True), rng)
    chunks = -(-cols // 128)
    divides = [n for n in program.statements_of("tensor_scalar") if program[n].attr("op") == "divide"]
    assert len(divides) == (-(-rows // 128) if chunks > 1 else 0)


def test_row_statistic_is_computed_once_per_row_block(rng: np.random.Generator) -> None:
    def centre(x):
        return nkigym.tensor_tensor(x, nkigym.tensor_reduce(x, op="max"), op="subtract")

    program = _check(centre, {"x": (256, 512)}, lambda x: x - x.max(axis=1, keepdims=True), rng)
    # 2 row blocks x 4 chunks of the row: one max per chunk, not one per output tile
    assert len(program.statements_of("tensor_reduce")) == 2 * 4
    assert len(program.loads_of("x")) == 2 * 4  # and each chunk loaded once, read by the output too


def test_broadcast_forms_round_trip_through_text(rng: np.random.Generator) -> None:
    def f(x, g, b):
        m = nkigym.tensor_reduce(x, op="mean")
        y = nkigym.activation(x, op="exp", scale=0.5, bias=nkigym.tensor_scalar(m, -1.0, op="multiply"))
        return nkigym.tensor_tensor(nkigym.tensor_tensor(y, g, op="multiply"), b, op="add")

    shapes = {"x": (200, 300), "g": (1, 300), "b": (1, 300)}
    program = nkigym.tile(f, shapes)
    again = nkigym.parse_program(str(program), shapes=shapes)
    assert again.canonical_hash == program.canonical_hash
    ops = {again[n].op for n in again.ids}
    assert {TENSOR_ROW, ACTIVATION_BIAS} <= ops


def test_parser_tells_the_forms_apart_by_operands() -> None:
    text = """
def f(x, g):
    output = nkigym.ndarray((128, 256), dtype=np.float32)
    tensor_0 = x[0:128, 0:256]
    tensor_1 = g[0:1, 0:256]
    tensor_2 = nkigym.tensor_reduce(tensor_0, op="max")
    tensor_3 = nkigym.tensor_scalar(tensor_0, tensor_2, op="subtract")
    tensor_4 = nkigym.tensor_scalar(tensor_3, 2.0, op="multiply")
    tensor_5 = nkigym.tensor_tensor(tensor_4, tensor_1, op="multiply")
    tensor_6 = nkigym.tensor_tensor(tensor_5, tensor_5, op="add")
    output[0:128, 0:256] = tensor_6
    return output
"""
    program = nkigym.parse_program(text)
    names = [program[n].op.name for n in program.ids]
    assert names[4:8] == ["tensor_column", "tensor_scalar", "tensor_row", "tensor_tensor"]
    assert program.statements[4].op is TENSOR_COLUMN and program.statements[7].op is TENSOR_TENSOR


def test_wrong_broadcast_shape_in_text_is_a_shape_error() -> None:
    text = """
def f(x):
    output = nkigym.ndarray((128, 256), dtype=np.float32)
    tensor_0 = x[0:128, 0:256]
    tensor_1 = nkigym.tensor_scalar(tensor_0, tensor_0[0:128, 0:2], op="subtract")
    output[0:128, 0:256] = tensor_1
    return output
"""
    with pytest.raises(nkigym.NkigymError, match=r"column operand of a \(128, 256\) tile must be \(128, 1\)"):
        nkigym.parse_program(text)
