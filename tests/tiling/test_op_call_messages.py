"""Op-call arguments a user gets wrong while tracing: the broadcast order names the
operand that would be spread, a bias that is neither a number nor a tensor says so, a
non-finite activation scale is refused, and comparing traced tensors is refused."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import nkigym_graph as ng


def test_the_broadcast_order_error_names_the_spread_operand_first() -> None:
    def f(x: Any, y: Any) -> Any:
        return ng.tensor_tensor(y, x, op="subtract")

    with pytest.raises(ng.NkigymError, match=r"the \(1, 600\) operand is spread over the \(130, 600\) one"):
        ng.tile(f, {"x": (130, 600), "y": (1, 600)})


def test_the_broadcast_order_error_eagerly_too() -> None:
    with pytest.raises(ng.NkigymError, match=r"the \(4, 1\) operand is spread over the \(4, 3\) one"):
        ng.tensor_tensor(np.ones((4, 1)), np.ones((4, 3)), op="subtract")


@pytest.mark.parametrize("bias", ["1", None, object()], ids=["str", "None", "object"])
def test_a_bias_that_is_neither_a_number_nor_a_tensor(bias: object) -> None:
    def f(x: Any) -> Any:
        return ng.activation(x, op="exp", bias=bias)

    with pytest.raises(ng.NkigymError, match=r"activation: bias must be a number or a \[P, 1\] tensor"):
        ng.tile(f, {"x": (128, 256)})


@pytest.mark.parametrize("scale", [math.nan, math.inf, -math.inf], ids=str)
def test_a_non_finite_scale_is_refused(scale: float) -> None:
    def f(x: Any) -> Any:
        return ng.activation(x, op="exp", scale=scale)

    with pytest.raises(ng.NkigymError, match=f"scale must be a finite number, got {scale}"):
        ng.tile(f, {"x": (128, 256)})
    with pytest.raises(ng.NkigymError, match="scale must be a finite number"):
        ng.activation(np.ones((2, 2)), op="exp", scale=scale, bias=np.ones((2, 1)))


def test_a_non_finite_scale_in_program_text_fails_verification() -> None:
    def f(x: Any) -> Any:
        return ng.activation(x, op="exp", scale=2.0)

    text = str(ng.tile(f, {"x": (128, 256)})).replace("scale=2.0", 'scale=float("nan")')
    with pytest.raises(ng.VerificationError, match=r"\[attributes\].*scale must be a finite number"):
        ng.parse_program(text)


def test_a_non_finite_bias_stays_allowed() -> None:
    assert ng.activation(np.zeros((1, 1)), op="exp", bias=-math.inf)[0, 0] == 0.0


@pytest.mark.parametrize(
    "compare",
    [lambda x, y: x == y, lambda x, y: x != y, lambda x, y: x == x, lambda x, y: x < y],
    ids=["eq", "ne", "eq_self", "lt"],
)
def test_comparing_traced_tensors_is_refused(compare: Any) -> None:
    def f(x: Any, y: Any) -> Any:
        if compare(x, y):
            return x
        return y

    with pytest.raises(ng.TilingError, match=r"comparison .* is not supported on traced tensor x"):
        ng.tile(f, {"x": (128, 128), "y": (128, 128)})


def test_traced_tensors_still_key_dicts_and_sets() -> None:
    def f(x: Any, y: Any) -> Any:
        seen = {x: 1, y: 2}
        assert len({x, y, x}) == 2 and seen[y] == 2
        return ng.tensor_tensor(x, y, op="add")

    assert len(ng.tile(f, {"x": (128, 128), "y": (128, 128)})) > 0
