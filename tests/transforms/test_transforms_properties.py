"""Random tiled programs under random sequences of matches stay verified and equal numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nkigym_graph as ng

SIZES = st.sampled_from([64, 128, 200, 256, 384])
TRANSFORMS = ["data_reuse", "operand_merge", "free_dim_merge", "dead_code"]


def chain(a, b, c):
    return ng.nc_matmul(ng.nc_matmul(a, b), c)


def tail(a, b, bias):
    return ng.activation(ng.tensor_tensor(ng.nc_matmul(a, b), bias, op="add"), op="tanh")


def scaled(a, b):
    return ng.tensor_scalar(ng.activation(ng.nc_matmul(a, b), op="relu"), 0.5, op="multiply")


def transposed(a):
    return ng.nc_transpose(ng.activation(a, op="exp"))


FUNCTIONS = [chain, tail, scaled, transposed]


@st.composite
def tiled_cases(draw: st.DrawFn):
    """A matmul chain or elementwise tail with ragged sizes, tiled in float64."""
    func = draw(st.sampled_from(FUNCTIONS))
    k, m, n, p = draw(SIZES), draw(SIZES), draw(SIZES), draw(SIZES)
    all_shapes = {"a": (k, m), "b": (k, n), "c": (m, p), "bias": (m, n)}
    shapes = {name: all_shapes[name] for name in func.__code__.co_varnames[: func.__code__.co_argcount]}
    return ng.tile(func, shapes, dtype=np.float64), func, shapes


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiled_cases(), st.lists(st.tuples(st.sampled_from(TRANSFORMS), st.integers(0, 10**6)), max_size=12))
def test_random_rewrite_sequences_stay_verified_and_exact(case, steps) -> None:
    program, func, shapes = case
    rng = np.random.default_rng(7)
    inputs = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    expected = func(**inputs)
    for transform, pick in steps:
        matches = ng.analyze(program, transform)
        if not matches:
            continue
        before = program.canonical_hash
        result = ng.apply(program, transform, matches[pick % len(matches)])
        assert program.canonical_hash == before  # the input snapshot is untouched
        assert result.canonical_hash != before
        program = result
    np.testing.assert_allclose(ng.interpret(program, **inputs), expected, rtol=1e-9, atol=1e-9)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiled_cases())
def test_saturation_keeps_numerics(case) -> None:
    program, func, shapes = case
    rng = np.random.default_rng(3)
    inputs = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    saturated = ng.saturate(program)
    assert len(saturated) <= len(program)
    np.testing.assert_allclose(ng.interpret(saturated, **inputs), func(**inputs), rtol=1e-9, atol=1e-9)
