"""Non-finite scalars (inf, -inf, nan) round-trip through text, the interpreter and NKI."""

from __future__ import annotations

import math

import numpy as np
import pytest

import nkigym_graph as nkigym
from nkigym_graph.errors import ParseError

VALUES = [math.inf, -math.inf, math.nan]


def _program(value: float) -> nkigym.Program:
    def f(x):  # type: ignore[no-untyped-def]
        return nkigym.tensor_scalar(x, value, op="add")

    return nkigym.tile(f, {"x": (128, 256)})


@pytest.mark.parametrize("value", VALUES, ids=str)
def test_text_round_trip(value: float) -> None:
    program = _program(value)
    text = str(program)
    assert f'float("{value}")' in text
    again = nkigym.parse_program(text)
    assert again == program and str(again) == text


@pytest.mark.parametrize("value", VALUES, ids=str)
def test_interpret_and_simulate_agree_with_numpy(value: float, rng: np.random.Generator) -> None:
    program = nkigym.parse_program(str(_program(value)))
    x = rng.standard_normal((128, 256)).astype(np.float32)
    want = x + np.float32(value)
    np.testing.assert_array_equal(nkigym.interpret(program, x=x), want)
    kernel = nkigym.emit(program, backend="nki")
    assert f'operand0=float("{value}")' in kernel
    np.testing.assert_array_equal(nkigym.nki_sim.simulate(kernel, x), want)


@pytest.mark.parametrize("text", ['float("inf")', 'float("-INF")', 'float("nan")'])
def test_the_parser_reads_float_calls_of_non_finite_strings(text: str) -> None:
    source = str(_program(0.5)).replace("0.5", text)
    value = nkigym.parse_program(source).statements[2].attr("scalar")
    assert repr(value) == repr(float(text[7:-2]))


@pytest.mark.parametrize(
    "text", ["inf", 'float("1.5")', "float(__import__('os').getpid())", 'float(x="inf")']
)
def test_the_parser_evaluates_nothing_else(text: str) -> None:
    source = str(_program(0.5)).replace("0.5", text)
    with pytest.raises(ParseError, match="expected a literal"):
        nkigym.parse_program(source)
