"""tile() on random arguments: a Program or a NkigymError, never a raw Python error."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import nkigym_graph as nkigym
from nkigym_graph.errors import NkigymError


def relu(a):
    return nkigym.activation(a, op="relu")


def matmul(a, b):
    return nkigym.nc_matmul(a, b)


good_dim = st.integers(1, 700)
dims = st.one_of(
    good_dim,
    good_dim,
    good_dim,
    st.integers(-2, 0),
    st.sampled_from([10**7, 2**70, 1.5, "128", None, True, np.int64(128)]),
)
shape = st.one_of(
    st.tuples(dims, dims),
    st.tuples(dims, dims),
    st.lists(dims, max_size=3),
    st.sampled_from(["128x128", None, 5, b"ab", {"x": 1}]),
)
shapes = st.one_of(
    st.fixed_dictionaries({"a": shape, "b": shape}),
    st.fixed_dictionaries({"a": shape}),
    st.dictionaries(st.sampled_from(["a", "b", "c", ""]), shape, max_size=3),
    st.lists(shape, max_size=3),
    st.sampled_from([None, 5, "a", b"a", 1.5]),
)
dtypes = st.sampled_from(["bf16", "fp32", "float16", "nope", "", None, 5, np.float32, np.int8, "np.float64"])
targets = st.sampled_from(["trn2", "trn1", "wormhole_b0", "nope", None, 5, nkigym.TRN2])
limits = st.sampled_from([1_000_000, 1, 10, 0, -1, True, 2.5, "10"])


def _tile(func, shapes, **options) -> None:
    try:
        program = nkigym.tile(func, shapes, **options)
    except NkigymError as err:
        assert str(err)
        return
    assert len(program) <= options.get("max_statements", 1_000_000)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(func=st.sampled_from([relu, matmul]), shapes=shapes)
def test_random_shapes_tile_or_are_refused_by_name(func, shapes) -> None:
    _tile(func, shapes)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(func=st.sampled_from([relu, matmul]), dtype=dtypes, target=targets, limit=limits)
def test_random_options_tile_or_are_refused_by_name(func, dtype, target, limit) -> None:
    shapes = {"a": (256, 128), "b": (256, 256)} if func is matmul else {"a": (256, 128)}
    _tile(func, shapes, dtype=dtype, target=target, max_statements=limit)
