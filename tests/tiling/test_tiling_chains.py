"""Tiled op chains against numpy: double matmul, tails after K accumulation, bias, transpose,
tensor_scalar, row reductions, shared operands."""

from __future__ import annotations

import numpy as np
import pytest

from nkigym_graph import interpret
from nkigym_graph.tiling import (
    activation,
    nc_matmul,
    nc_transpose,
    tensor_reduce,
    tensor_scalar,
    tensor_tensor,
    tile,
)

TOL = 1e-10


def _check(func, shapes: dict[str, tuple[int, int]], rng: np.random.Generator, expected):
    """Tile ``func``, interpret it on random float64 inputs, compare with the eager run and
    with ``expected(**arrays)``; return the program."""
    arrays = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    program = tile(func, shapes, dtype=np.float64)
    got = interpret(program, **arrays)
    np.testing.assert_allclose(got, func(**arrays), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(got, expected(**arrays), rtol=TOL, atol=TOL)
    return program


def _ops(program) -> list[str]:
    return [s.op.name for s in program.statements]


def double_matmul(a, b, c):
    return nc_matmul(nc_matmul(a, b), c)


@pytest.mark.parametrize(
    ("k1", "m1", "n1", "n2"), [(128, 128, 128, 128), (256, 200, 130, 300), (100, 384, 256, 64)]
)
def test_double_matmul(k1: int, m1: int, n1: int, n2: int, rng: np.random.Generator) -> None:
    shapes = {"a": (k1, m1), "b": (k1, n1), "c": (m1, n2)}
    program = _check(double_matmul, shapes, rng, lambda a, b, c: (a.T @ b).T @ c)
    tiles = -(-n1 // 128) * -(-n2 // 128)
    outer_k, inner_k = -(-m1 // 128), -(-k1 // 128)
    inner_tiles = outer_k * -(-n1 // 128)  # each inner tile computed once, read by every outer tile
    assert len(program.statements_of("nc_matmul")) == tiles * outer_k + inner_tiles * inner_k


def test_double_matmul_inner_tile_before_outer_product() -> None:
    shapes = {"a": (256, 256), "b": (256, 128), "c": (256, 128)}
    lines = [ln.strip() for ln in str(tile(double_matmul, shapes)).splitlines() if ln.strip()]
    assert lines[2:16] == [
        "tensor_0 = a[0:128, 0:128]",
        "tensor_1 = b[0:128, 0:128]",
        "tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)",
        "tensor_3 = a[128:256, 0:128]",
        "tensor_4 = b[128:256, 0:128]",
        "tensor_2[0:128, 0:128] += nkigym.nc_matmul(tensor_3, tensor_4)",
        "tensor_5 = c[0:128, 0:128]",
        "tensor_6 = nkigym.nc_matmul(tensor_2, tensor_5)",
        "tensor_7 = a[0:128, 128:256]",
        "tensor_8 = b[0:128, 0:128]",
        "tensor_9 = nkigym.nc_matmul(tensor_7, tensor_8)",
        "tensor_10 = a[128:256, 128:256]",
        "tensor_11 = b[128:256, 0:128]",
        "tensor_9[0:128, 0:128] += nkigym.nc_matmul(tensor_10, tensor_11)",
    ]
    assert lines[16:19] == [
        "tensor_12 = c[128:256, 0:128]",
        "tensor_6[0:128, 0:128] += nkigym.nc_matmul(tensor_9, tensor_12)",
        "output[0:128, 0:128] = tensor_6",
    ]


def matmul_tanh(a, b):
    return activation(nc_matmul(a, b), op="tanh")


@pytest.mark.parametrize(("k", "m", "n"), [(256, 128, 128), (256, 200, 384), (1000, 128, 64)])
def test_matmul_then_tanh_once_per_output_tile(k: int, m: int, n: int, rng: np.random.Generator) -> None:
    program = _check(matmul_tanh, {"a": (k, m), "b": (k, n)}, rng, lambda a, b: np.tanh(a.T @ b))
    tiles = -(-m // 128) * -(-n // 128)
    assert len(program.statements_of("activation")) == tiles
    ops = _ops(program)
    for store in program.statements_of("store"):
        # the tail sits between the last K chunk and the store, never inside the K loop
        assert ops[store - 1] == "activation"
        assert ops[store - 2] == "nc_matmul" and program[store - 2].accumulate


def matmul_bias(a, b, bias):
    return tensor_tensor(nc_matmul(a, b), bias, op="add")


def test_matmul_plus_bias(rng: np.random.Generator) -> None:
    shapes = {"a": (300, 200), "b": (300, 256), "bias": (200, 256)}
    program = _check(matmul_bias, shapes, rng, lambda a, b, bias: a.T @ b + bias)
    assert len(program.loads_of("bias")) == len(program.statements_of("store")) == 4
    ops = _ops(program)
    for node in program.loads_of("bias"):
        assert ops[node + 1] == "tensor_tensor"


def transpose(x):
    return nc_transpose(x)


@pytest.mark.parametrize("shape", [(128, 128), (200, 300), (64, 513)])
def test_transpose(shape: tuple[int, int], rng: np.random.Generator) -> None:
    program = _check(transpose, {"x": shape}, rng, lambda x: x.T)
    for node in program.statements_of("nc_transpose"):
        p, f = program[node].operands[0].slices
        assert p[1] <= 128 and f[1] <= 128


def scaled_transpose(x):
    return tensor_scalar(nc_transpose(x), 0.5, op="multiply")


def test_tensor_scalar_after_transpose(rng: np.random.Generator) -> None:
    _check(scaled_transpose, {"x": (200, 130)}, rng, lambda x: 0.5 * x.T)


def test_tensor_scalar_subtract(rng: np.random.Generator) -> None:
    def shift(x):
        return tensor_scalar(x, 3, op="subtract")

    program = _check(shift, {"x": (300, 100)}, rng, lambda x: x - 3)
    assert program[program.statements_of("tensor_scalar")[0]].attr("scalar") == 3


def row_sum(x):
    return tensor_reduce(x, op="sum")


def row_max(x):
    return tensor_reduce(x, op="max")


def row_min(x):
    return tensor_reduce(x, op="min")


@pytest.mark.parametrize("shape", [(128, 128), (200, 300), (64, 1000)])
def test_row_sum_accumulates(shape: tuple[int, int], rng: np.random.Generator) -> None:
    program = _check(row_sum, {"x": shape}, rng, lambda x: x.sum(axis=1, keepdims=True))
    reduces = [program[i] for i in program.statements_of("tensor_reduce")]
    chunks, rows = -(-shape[1] // 128), -(-shape[0] // 128)
    assert len(reduces) == rows * chunks
    assert sum(s.accumulate for s in reduces) == rows * (chunks - 1)


@pytest.mark.parametrize(
    ("func", "fold", "numpy_op"), [(row_max, "maximum", np.max), (row_min, "minimum", np.min)]
)
def test_row_max_min_fold_with_tensor_tensor(func, fold: str, numpy_op, rng: np.random.Generator) -> None:
    program = _check(func, {"x": (200, 300)}, rng, lambda x: numpy_op(x, axis=1, keepdims=True))
    folds = [program[i] for i in program.statements_of("tensor_tensor")]
    assert len(folds) == 2 * 2  # 2 row tiles x (3 chunks - 1)
    assert {s.attr("op") for s in folds} == {fold}
    assert not any(program[i].accumulate for i in program.statements_of("tensor_reduce"))


def test_reduce_of_matmul(rng: np.random.Generator) -> None:
    def matmul_row_sum(a, b):
        return tensor_reduce(nc_matmul(a, b), op="sum")

    _check(
        matmul_row_sum,
        {"a": (200, 130), "b": (200, 300)},
        rng,
        lambda a, b: (a.T @ b).sum(axis=1, keepdims=True),
    )


def test_shared_operand_is_loaded_once_per_tile(rng: np.random.Generator) -> None:
    def symmetric(x):
        return tensor_tensor(x, nc_transpose(x), op="add")

    program = _check(symmetric, {"x": (256, 256)}, rng, lambda x: x + x.T)
    # per output tile: x[i, j] and x[j, i]; on the diagonal that is the same tile, loaded once
    assert len(program.loads_of("x")) == 2 + 2 * 2


def test_shared_intermediate(rng: np.random.Generator) -> None:
    def square_of_product(a, b):
        p = nc_matmul(a, b)
        return tensor_tensor(p, p, op="multiply")

    program = _check(square_of_product, {"a": (256, 128), "b": (256, 128)}, rng, lambda a, b: (a.T @ b) ** 2)
    assert len(program.statements_of("nc_matmul")) == 2  # computed once, read twice


def test_gram_matrix_same_dimension_twice(rng: np.random.Generator) -> None:
    def gram(a):
        return nc_matmul(a, a)

    _check(gram, {"a": (200, 300)}, rng, lambda a: a.T @ a)


def test_parameter_returned_is_copied(rng: np.random.Generator) -> None:
    def copy(x):
        return x

    program = _check(copy, {"x": (200, 130)}, rng, lambda x: x)
    assert _ops(program).count("load") == 4


def test_unused_intermediate_is_not_emitted(rng: np.random.Generator) -> None:
    def f(a, b):
        activation(a, op="exp")
        return nc_matmul(a, b)

    program = _check(f, {"a": (128, 128), "b": (128, 128)}, rng, lambda a, b: a.T @ b)
    assert program.statements_of("activation") == ()


@pytest.mark.parametrize(
    "func", [double_matmul, matmul_tanh, matmul_bias, scaled_transpose, row_sum, row_max]
)
def test_text_round_trip(func) -> None:
    from nkigym_graph import parse_program

    shapes = {"a": (256, 200), "b": (256, 300), "c": (200, 130), "bias": (200, 300), "x": (200, 300)}
    names = func.__code__.co_varnames[: func.__code__.co_argcount]
    program = tile(func, {name: shapes[name] for name in names})
    again = parse_program(str(program))
    assert again == program and str(again) == str(program)
