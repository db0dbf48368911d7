"""Functions and shapes that cannot be tiled fail with a TilingError that names the problem."""

from __future__ import annotations

import numpy as np
import pytest

from nkigym_graph import NkigymError, TilingError
from nkigym_graph.tiling import (
    OpCallError,
    activation,
    nc_matmul,
    tensor_reduce,
    tensor_scalar,
    tensor_tensor,
    tile,
)


def matmul(a, b):
    return nc_matmul(a, b)


def double_matmul(a, b, c):
    return nc_matmul(nc_matmul(a, b), c)


def add(x, y):
    return tensor_tensor(x, y, op="add")


@pytest.mark.parametrize(
    ("func", "shapes", "message"),
    [
        (
            matmul,
            {"a": (128, 64), "b": (256, 64)},
            r"nc_matmul \(call 0\), axis K of lhs and rhs: size mismatch, "
            r"a\[axis 0\] has size 128 but b\[axis 0\] has size 256",
        ),
        (
            double_matmul,
            {"a": (128, 200), "b": (128, 64), "c": (256, 64)},
            r"nc_matmul \(call 1\), axis K.*size 200 but c\[axis 0\] has size 256",
        ),
        (
            add,
            {"x": (128, 128), "y": (128, 64)},
            r"tensor_tensor \(call 0\), axis free.*size 128 but y\[axis 1\] has size 64",
        ),
        (
            add,
            {"x": (64, 128), "y": (128, 128)},
            r"tensor_tensor \(call 0\), axis partition.*size 64 but y\[axis 0\] has size 128",
        ),
    ],
)
def test_size_mismatch_names_op_and_both_sizes(func, shapes, message: str) -> None:
    with pytest.raises(TilingError, match=message):
        tile(func, shapes)


def test_operand_that_neither_matches_nor_broadcasts() -> None:
    def f(x, y):
        return tensor_tensor(x, y, op="subtract")

    with pytest.raises(TilingError, match=r"tensor_tensor.*size 128 but y\[axis 1\] has size 2"):
        tile(f, {"x": (128, 128), "y": (128, 2)})


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ({"a": (128, 128)}, r"matmul: missing shape for parameter\(s\) 'b'"),
        (
            {"a": (128, 128), "b": (128, 128), "c": (1, 1)},
            r"shapes given for unknown parameter\(s\) 'c'; the parameters are a, b",
        ),
        ({"a": (128, 128, 2), "b": (128, 128)}, r"'a': shape \(128, 128, 2\) has rank 3; only 2-D"),
        ({"a": (128,), "b": (128, 128)}, r"'a': shape \(128,\) has rank 1"),
        ({"a": (128, 0), "b": (128, 128)}, r"'a': shape \(128, 0\) must have positive sizes"),
        ({"a": (128, 1.5), "b": (128, 128)}, r"'a': shape .* is not a tuple of integers"),
        ([(128, 128)], r"1 shapes given for 2 parameters \(a, b\)"),
    ],
)
def test_bad_shapes(shapes, message: str) -> None:
    with pytest.raises(TilingError, match=message):
        tile(matmul, shapes)


def test_unused_parameter() -> None:
    def f(a, b, c):
        return nc_matmul(a, b)

    with pytest.raises(TilingError, match=r"parameter\(s\) 'c' not used by the returned tensor"):
        tile(f, {"a": (128, 128), "b": (128, 128), "c": (128, 128)})


@pytest.mark.parametrize(
    ("func", "message"),
    [
        (lambda a: None, r"returned None \(missing `return`\?\)"),
        (lambda a: 3, "returned a value of type int"),
        (lambda a: (a, a), "returned a value of type tuple"),
        (lambda a: np.ones((2, 2)), "returned a value of type ndarray"),
    ],
)
def test_must_return_a_traced_tensor(func, message: str) -> None:
    with pytest.raises(TilingError, match=message):
        tile(func, {"a": (128, 128)})


@pytest.mark.parametrize(
    ("func", "message"),
    [
        (lambda a: a + a, "an arithmetic operator is not supported on traced tensor a"),
        (lambda a: a @ a, "an arithmetic operator is not supported"),
        (lambda a: np.tanh(a), "numpy function tanh is not supported on traced tensor a"),
        (lambda a: np.asarray(a), "conversion to a numpy array is not supported"),
        (lambda a: a[0:4, 0:4], "indexing is not supported"),
        (lambda a: activation(a) if a else a, "truth testing is not supported"),
    ],
)
def test_untraceable_operations(func, message: str) -> None:
    with pytest.raises(TilingError, match=message):
        tile(func, {"a": (128, 128)})


@pytest.mark.parametrize(
    ("func", "message"),
    [
        (lambda a: activation(a, op="tanhh"), r"activation: op='tanhh' is not one of \['abs'"),
        (lambda a: tensor_reduce(a, op="median"), r"tensor_reduce: op='median' is not one of \['max'"),
        (
            lambda a: tensor_scalar(a, "two"),  # type: ignore[arg-type]
            "tensor_scalar: the scalar must be a number or a tensor, got 'two'",
        ),
        (lambda a: activation(a, scale="x"), "scale must be a number, got 'x'"),  # type: ignore[arg-type]
        (lambda a: tensor_scalar(a, a), r"got a tensor of x's shape \(128, 128\); .* use tensor_tensor"),
        (
            lambda a: tensor_tensor(tensor_reduce(a), a, op="subtract"),
            r"the broadcast operand must come second",
        ),
        (lambda a: tensor_tensor(a, np.ones((128, 128))), "cannot mix traced tensors and constant"),
    ],
)
def test_bad_op_calls_while_tracing(func, message: str) -> None:
    with pytest.raises(OpCallError, match=message):
        tile(func, {"a": (128, 128)})


def test_variadic_and_empty_signatures() -> None:
    with pytest.raises(TilingError, match=r"parameter \*args is not supported"):
        tile(lambda *args: args[0], {"args": (128, 128)})
    with pytest.raises(TilingError, match="takes no tensor parameters"):
        tile(lambda: None, {})


def test_tensor_from_another_trace() -> None:
    leaked = []

    def first(a):
        leaked.append(a)
        return a

    tile(first, {"a": (128, 128)})
    with pytest.raises(TilingError, match="returned a tensor traced for another function"):
        tile(lambda b: leaked[0], {"b": (128, 128)})
    with pytest.raises(TilingError, match="belongs to another trace"):
        tile(lambda b: tensor_tensor(b, leaked[0]), {"b": (128, 128)})


def test_errors_share_the_library_base_class() -> None:
    assert issubclass(OpCallError, TilingError) and issubclass(TilingError, NkigymError)
    assert issubclass(OpCallError, ValueError)
