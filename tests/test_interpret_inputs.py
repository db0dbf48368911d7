"""``interpret`` refuses inputs that are not real numbers, naming the parameter and the
dtype, and an input passed positionally (inputs go by keyword)."""

from __future__ import annotations

import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import nkigym_graph as ng


def _exp(x: Any) -> Any:
    return ng.activation(x, op="exp")


PROGRAM = ng.tile(_exp, {"x": (128, 256)})
SHAPE = (128, 256)


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (np.full(SHAPE, "a"), "<U1"),
        (np.full(SHAPE, b"1"), "|S1"),
        (np.ones(SHAPE, complex), "complex128"),
        (np.ones(SHAPE, np.complex64), "complex64"),
        (np.ones(SHAPE, object), "object"),
        (np.ones(SHAPE, "datetime64[s]"), r"datetime64\[s\]"),
    ],
    ids=lambda v: str(getattr(v, "dtype", v)),
)
def test_a_non_real_input_is_refused_naming_parameter_and_dtype(value: np.ndarray, dtype: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: refused before any cast
        with pytest.raises(
            ng.NkigymError, match=f"input 'x' has dtype {dtype}, which is not a real number type"
        ):
            ng.interpret(PROGRAM, x=value)


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int8, np.uint16, bool, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn]
)
def test_real_inputs_are_accepted(dtype: Any) -> None:
    x = np.zeros(SHAPE, dtype=dtype)
    np.testing.assert_array_equal(ng.interpret(PROGRAM, x=x), np.ones(SHAPE))


def test_a_nested_list_is_accepted() -> None:
    np.testing.assert_array_equal(ng.interpret(PROGRAM, x=np.zeros(SHAPE).tolist()), np.ones(SHAPE))


@pytest.mark.parametrize("value", [np.zeros(SHAPE), np.zeros(SHAPE).tolist()], ids=["ndarray", "list"])
def test_an_input_passed_positionally_says_inputs_go_by_keyword(value: Any) -> None:
    with pytest.raises(
        ng.NkigymError, match=r"pass inputs by keyword, one per parameter: interpret\(program, x=\.\.\.\)"
    ):
        ng.interpret(PROGRAM, value)


def test_a_bad_dtype_still_says_dtype() -> None:
    with pytest.raises(ng.NkigymError, match="dtype must be a numpy dtype or None, got str 'nope'"):
        ng.interpret(PROGRAM, "nope", x=np.zeros(SHAPE))
