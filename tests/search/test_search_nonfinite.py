"""Search verification compares infinities and nans by position and sign."""

from __future__ import annotations

import numpy as np
import pytest

import nkigym_graph as nkigym
from nkigym_graph.numeric.compare import errors, relative_error
from nkigym_graph.numeric.equivalence import _compare


def exp_of_large(x):  # type: ignore[no-untyped-def]
    return nkigym.activation(nkigym.tensor_scalar(x, 1000.0, op="multiply"), op="exp")


def test_search_accepts_rewrites_of_a_program_that_overflows_to_inf() -> None:
    program = nkigym.tile(exp_of_large, {"x": (128, 1024)})
    with np.errstate(over="ignore"):
        result = nkigym.search(program, strategy="random", budget=10, seed=0)
        saturated = nkigym.saturate(program, check=True)
    # every rewritten program is checked against the root's infs
    assert result.stats.verified == result.stats.states - 1
    assert len(saturated) < len(program)


@pytest.mark.parametrize(
    ("got", "want", "agree"),
    [
        (np.inf, np.inf, True),
        (-np.inf, -np.inf, True),
        (np.nan, np.nan, True),
        (np.inf, -np.inf, False),
        (np.nan, np.inf, False),
        (1.0, np.inf, False),
        (np.inf, 1.0, False),
        (np.nan, 1.0, False),
        (1.0, 1.0, True),
    ],
)
def test_compare_by_position_and_sign(got: float, want: float, agree: bool) -> None:
    actual = {"out": np.array([[0.5, got]])}
    expected = {"out": np.array([[0.5, want]])}
    problem = _compare(actual, expected, None)
    assert (problem is None) == agree
    if not agree:
        assert problem is not None and problem.startswith("out[0, 1]")


def test_relative_error_ignores_matching_non_finite_values() -> None:
    want = np.array([2.0, np.inf, np.nan, -np.inf])
    assert relative_error(want + np.array([0.2, 0, 0, 0]), want) == pytest.approx(0.1)
    assert errors([np.inf], [-np.inf])[0] == np.inf
