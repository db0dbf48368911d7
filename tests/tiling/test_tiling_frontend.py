"""The op functions computed eagerly on numpy arrays: the user's reference results."""

from __future__ import annotations

from math import erf

import numpy as np
import pytest

from nkigym_graph.tiling import (
    OpCallError,
    activation,
    nc_matmul,
    nc_transpose,
    tensor_reduce,
    tensor_scalar,
    tensor_tensor,
)


def test_matmul_contracts_dim_zero(rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 4))
    np.testing.assert_allclose(nc_matmul(a, b), a.T @ b)


def test_transpose(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 7))
    np.testing.assert_array_equal(nc_transpose(x), x.T)


@pytest.mark.parametrize(
    ("name", "ref"), [("tanh", np.tanh), ("exp", np.exp), ("relu", lambda x: np.maximum(x, 0))]
)
def test_activation(name: str, ref, rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 6))
    np.testing.assert_allclose(activation(x, op=name), ref(x))


def test_activation_default_is_tanh(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 6))
    np.testing.assert_allclose(activation(x), np.tanh(x))


@pytest.mark.parametrize(
    ("name", "ref"), [("add", np.add), ("subtract", np.subtract), ("maximum", np.maximum)]
)
def test_tensor_tensor(name: str, ref, rng: np.random.Generator) -> None:
    x, y = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    np.testing.assert_allclose(tensor_tensor(x, y, op=name), ref(x, y))


def test_tensor_scalar(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 6))
    np.testing.assert_allclose(tensor_scalar(x, 2.5), 2.5 * x)
    np.testing.assert_allclose(tensor_scalar(x, np.float32(2), op="add"), x + 2)


def test_tensor_scalar_refuses_a_full_shape_operand_pointing_to_tensor_tensor() -> None:
    """It used to become ``tensor_tensor`` quietly, although its operand is a number, a
    column or a row."""
    x = np.ones((4, 6))
    with pytest.raises(OpCallError) as info:
        tensor_scalar(x, np.ones((4, 6)), op="add")
    assert str(info.value) == (
        "tensor_scalar: the scalar operand is a number, a [P, 1] column or a [1, F] row of x, "
        "got a tensor of x's shape (4, 6); for an elementwise op of two tensors use "
        "tensor_tensor(x, y, op='add')"
    )


@pytest.mark.parametrize(("name", "ref"), [("sum", np.sum), ("max", np.max), ("min", np.min)])
def test_tensor_reduce_keeps_a_column(name: str, ref, rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 6))
    got = tensor_reduce(x, op=name)
    assert got.shape == (4, 1)
    np.testing.assert_allclose(got, ref(x, axis=1, keepdims=True))


def test_nested_eager_calls(rng: np.random.Generator) -> None:
    a, b, bias = rng.standard_normal((8, 3)), rng.standard_normal((8, 5)), rng.standard_normal((3, 5))
    got = tensor_tensor(activation(nc_matmul(a, b), op="tanh"), bias)
    np.testing.assert_allclose(got, np.tanh(a.T @ b) + bias)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: nc_matmul(np.ones((3, 2)), np.ones((4, 2))), "nc_matmul: contraction sizes differ"),
        (lambda: tensor_tensor(np.ones((3, 2)), np.ones((3, 3))), "tensor_tensor: .*shapes differ"),
        (lambda: activation(np.ones(3)), r"activation: operand data must be 2-D, got shape \(3,\)"),
        (lambda: activation(np.ones((2, 2)), op="mish"), "activation: op='mish' is not one of"),
        (lambda: activation(np.ones((2, 2)), op="erf"), "activation: op='erf' is not one of"),
        (lambda: tensor_tensor(np.ones((2, 2)), np.ones((2, 2)), op="pow"), "op='pow' is not one of"),
        (lambda: tensor_scalar(np.ones((2, 2)), True), "the scalar must be a number or a tensor, got True"),
        (lambda: tensor_reduce(np.ones((2, 2)), op="median"), "op='median' is not one of"),
        (lambda: activation(np.ones((2, 2)), bias=np.ones((1, 2))), "column operand of a .* must be"),
    ],
)
def test_bad_eager_calls(call, message: str) -> None:
    with pytest.raises(OpCallError, match=message):
        call()


def test_gelu_is_the_tanh_form_both_backends_compute() -> None:
    x = np.linspace(-6.0, 6.0, 97).reshape(1, 97)
    got = activation(x, op="gelu")
    tanh_form = 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(got, tanh_form, rtol=1e-12)
    # within 1e-3 of the exact (erf) GELU everywhere
    exact = np.array([[0.5 * v * (1.0 + erf(v / np.sqrt(2.0))) for v in x[0]]])
    assert np.max(np.abs(got - exact)) < 1e-3
