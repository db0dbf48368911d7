"""``affine_select``: numpy semantics against an index-by-index reference, the offset a
tile of a larger tensor takes, the coverage of a region, printing and parsing, errors."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nkigym_graph as nkigym
from nkigym_graph.ir.ops import AFFINE_SELECT
from nkigym_graph.ir.ops.select import ALL, NONE, SOME
from nkigym_graph.ir.statement import make_attrs

CMP = {"greater_equal": operator.ge, "greater": operator.gt, "less_equal": operator.le, "less": operator.lt}
masks = st.fixed_dictionaries(
    {
        "offset": st.integers(-300, 300),
        "channel_multiplier": st.integers(-3, 3),
        "step": st.integers(-3, 3),
        "cmp": st.sampled_from(sorted(CMP)),
    }
)


def _reference(
    x: np.ndarray, offset: int, channel_multiplier: int, step: int, cmp: str, fill: float
) -> np.ndarray:
    """Element by element, as the NKI reference's pseudo code states it."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            value = offset + channel_multiplier * i + step * j
            keep = CMP[cmp](value, 0)
            out[i, j] = x[i, j] if keep else fill
    return out


def test_default_is_the_causal_mask() -> None:
    x = np.random.default_rng(0).standard_normal((5, 7))
    got = nkigym.affine_select(x)
    np.testing.assert_array_equal(got, np.where(np.tril(np.ones((5, 7), dtype=bool)), x, -np.inf))
    shifted = nkigym.affine_select(x, offset=2)
    np.testing.assert_array_equal(shifted, np.where(np.tril(np.ones((5, 7), dtype=bool), k=2), x, -np.inf))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    rows=st.integers(1, 9), cols=st.integers(1, 11), mask=masks, fill=st.sampled_from([-np.inf, -1e4, 0.0])
)
def test_semantics_equal_the_element_by_element_reference(
    rows: int, cols: int, mask: dict, fill: float
) -> None:
    x = np.random.default_rng(rows * 100 + cols).standard_normal((rows, cols))
    got = nkigym.affine_select(x, fill=fill, **mask)
    np.testing.assert_array_equal(got, _reference(x, fill=fill, **mask))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    rows=st.integers(2, 40),
    cols=st.integers(2, 40),
    mask=masks,
    data=st.data(),
)
def test_tile_attrs_mask_a_tile_as_the_whole_tensor_does(rows: int, cols: int, mask: dict, data) -> None:
    r0 = data.draw(st.integers(0, rows - 1))
    r1 = data.draw(st.integers(r0 + 1, rows))
    c0 = data.draw(st.integers(0, cols - 1))
    c1 = data.draw(st.integers(c0 + 1, cols))
    x = np.random.default_rng(0).standard_normal((rows, cols))
    attrs = AFFINE_SELECT.canonical_attrs(make_attrs(**mask))
    whole = AFFINE_SELECT.compute([x], dict(attrs))
    tiled = AFFINE_SELECT.tile_attrs(attrs, r0, c0)
    np.testing.assert_array_equal(AFFINE_SELECT.compute([x[r0:r1, c0:c1]], dict(tiled)), whole[r0:r1, c0:c1])
    kept = np.isfinite(whole[r0:r1, c0:c1])
    expected = ALL if kept.all() else NONE if not kept.any() else SOME
    assert AFFINE_SELECT.coverage(attrs, (r0, r1), (c0, c1)) == expected


def test_prints_and_parses_with_its_attributes() -> None:
    def f(x):
        return nkigym.affine_select(x, offset=3, step=-2, cmp="greater", fill=-1e4)

    program = nkigym.tile(f, {"x": (128, 128)})
    text = str(program)
    assert 'nkigym.affine_select(tensor_0, offset=3, step=-2, cmp="greater", fill=-10000.0)' in text
    assert nkigym.parse_program(text) == program
    causal = nkigym.tile(lambda x: nkigym.affine_select(x), {"x": (128, 128)})
    assert "nkigym.affine_select(tensor_0)" in str(causal)  # defaults are not printed
    assert nkigym.parse_program(str(causal)) == causal


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"offset": 1.5}, "offset must be an integer"),
        ({"step": True}, "step must be an integer"),
        ({"cmp": "equal"}, "cmp='equal' is not one of"),
        ({"fill": "x"}, "fill must be a number"),
    ],
)
def test_bad_attributes_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(nkigym.OpCallError, match=message):
        nkigym.affine_select(np.zeros((2, 2)), **kwargs)


def test_a_non_2d_operand_is_refused() -> None:
    with pytest.raises(nkigym.OpCallError, match="must be 2-D"):
        nkigym.affine_select(np.zeros(3))
