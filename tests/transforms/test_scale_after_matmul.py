"""``scale_after_matmul``: a per-row scale moves past the matmul it feeds through a
transpose, as its docstring's before/after texts say, only where one scale fits every K
step of a product, and never changes what the program computes (float64, random
shapes, ragged included)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nkigym_graph as nkigym

EPS = 1e-5
SHAPES = {"tensor_0": (128, 256), "tensor_4": (128, 1), "tensor_7": (128, 512), "tensor_10": (128, 512)}


def _lines(program: nkigym.Program) -> list[str]:
    return [line.strip() for line in str(program).splitlines() if line.strip()]


def _fragment(text: str, **shapes: tuple[int, int]) -> nkigym.Program:
    return nkigym.parse_fragment(text, shapes={**SHAPES, "output": (128, 512), **shapes})


def test_the_docstring_example() -> None:
    before = _fragment(
        """
tensor_5 = nkigym.tensor_scalar(tensor_0, tensor_4, op="multiply")
tensor_6 = nkigym.nc_transpose(tensor_5[0:128, 0:128])
tensor_8 = nkigym.nc_matmul(tensor_6, tensor_7)
tensor_9 = nkigym.nc_transpose(tensor_5[0:128, 128:256])
tensor_8[0:128, 0:512] += nkigym.nc_matmul(tensor_9, tensor_10)
output[0:128, 0:512] = tensor_8
"""
    )
    (match,) = nkigym.matches_of(before, "scale_after_matmul")
    after = nkigym.apply(before, "scale_after_matmul", match)
    assert _lines(after) == [
        "tensor_6 = nkigym.nc_transpose(tensor_0[0:128, 0:128])",
        "tensor_8 = nkigym.nc_matmul(tensor_6, tensor_7[0:128, 0:512])",
        "tensor_9 = nkigym.nc_transpose(tensor_0[0:128, 128:256])",
        "tensor_8[0:128, 0:512] += nkigym.nc_matmul(tensor_9, tensor_10[0:128, 0:512])",
        'tensor_8_scaled = nkigym.tensor_scalar(tensor_8, tensor_4[0:128, 0:1], op="multiply")',
        "output[0:128, 0:512] = tensor_8_scaled",
    ]
    assert not nkigym.matches_of(after, "scale_after_matmul")


def test_a_scaled_tile_read_elsewhere_stays_and_a_division_moves_as_a_division() -> None:
    before = _fragment(
        """
tensor_5 = nkigym.tensor_scalar(tensor_0, tensor_4, op="divide")
tensor_6 = nkigym.nc_transpose(tensor_5[0:128, 0:128])
tensor_8 = nkigym.nc_matmul(tensor_6, tensor_7)
output[0:128, 0:512] = tensor_8
other[0:128, 0:256] = tensor_5
""",
        other=(128, 256),
    )
    (match,) = nkigym.matches_of(before, "scale_after_matmul")
    lines = _lines(nkigym.apply(before, "scale_after_matmul", match))
    assert (
        'tensor_5 = nkigym.tensor_scalar(tensor_0[0:128, 0:256], tensor_4[0:128, 0:1], op="divide")' in lines
    )
    assert "tensor_6 = nkigym.nc_transpose(tensor_0[0:128, 0:128])" in lines
    assert 'tensor_8_scaled = nkigym.tensor_scalar(tensor_8, tensor_4[0:128, 0:1], op="divide")' in lines


@pytest.mark.parametrize(
    "text",
    [
        # an additive column does not commute with a matmul
        """
tensor_5 = nkigym.tensor_scalar(tensor_0, tensor_4, op="add")
tensor_6 = nkigym.nc_transpose(tensor_5[0:128, 0:128])
tensor_8 = nkigym.nc_matmul(tensor_6, tensor_7)
output[0:128, 0:512] = tensor_8
""",
        # the K steps of one product read rows scaled by different columns
        """
tensor_5 = nkigym.tensor_scalar(tensor_0, tensor_4, op="multiply")
tensor_11 = nkigym.tensor_scalar(tensor_0, tensor_12, op="multiply")
tensor_6 = nkigym.nc_transpose(tensor_5[0:128, 0:128])
tensor_8 = nkigym.nc_matmul(tensor_6, tensor_7)
tensor_9 = nkigym.nc_transpose(tensor_11[0:128, 128:256])
tensor_8[0:128, 0:512] += nkigym.nc_matmul(tensor_9, tensor_10)
output[0:128, 0:512] = tensor_8
""",
        # a K step reads an unscaled transpose
        """
tensor_5 = nkigym.tensor_scalar(tensor_0, tensor_4, op="multiply")
tensor_6 = nkigym.nc_transpose(tensor_5[0:128, 0:128])
tensor_8 = nkigym.nc_matmul(tensor_6, tensor_7)
tensor_9 = nkigym.nc_transpose(tensor_0[0:128, 128:256])
tensor_8[0:128, 0:512] += nkigym.nc_matmul(tensor_9, tensor_10)
output[0:128, 0:512] = tensor_8
""",
        # the transposed tile is also read as it is
        """
tensor_5 = nkigym.tensor_scalar(tensor_0, tensor_4, op="multiply")
tensor_6 = nkigym.nc_transpose(tensor_5[0:128, 0:128])
tensor_8 = nkigym.nc_matmul(tensor_6, tensor_7)
output[0:128, 0:512] = tensor_8
other[0:128, 0:128] = tensor_6
""",
    ],
    ids=["additive", "two-columns", "unscaled-step", "transpose-read-elsewhere"],
)
def test_no_match_where_one_row_scale_does_not_fit(text: str) -> None:
    program = _fragment(text, tensor_12=(128, 1), other=(128, 128))
    assert not nkigym.matches_of(program, "scale_after_matmul")


def rmsnorm_matmul(x, w):
    scale = nkigym.activation(
        nkigym.tensor_reduce(nkigym.activation(x, op="square"), op="mean"), op="rsqrt", bias=EPS
    )
    return nkigym.nc_matmul(nkigym.nc_transpose(nkigym.tensor_scalar(x, scale)), w)


def _reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return (x / np.sqrt((x**2).mean(axis=1, keepdims=True) + EPS)) @ w


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([64, 128, 200, 256, 300]),
    st.sampled_from([96, 128, 300, 512]),
    st.sampled_from([64, 260, 512, 600]),
    st.booleans(),
    st.integers(0, 2**16),
)
def test_rewritten_programs_equal_numpy_in_float64(
    m: int, k: int, n: int, saturated: bool, seed: int
) -> None:
    """Tiled (or saturated) ``rmsnorm(x) @ w`` with the scale moved past every matmul
    equals numpy; its transposes read the loaded ``x``, and nothing is scaled before a matmul."""
    program = nkigym.tile(rmsnorm_matmul, {"x": (m, k), "w": (k, n)}, dtype="float64")
    if saturated:
        program = nkigym.saturate(program, ["data_reuse", "operand_merge", "reduction_merge", "dead_code"])
    (match,) = nkigym.matches_of(program, "scale_after_matmul")
    after = nkigym.apply(program, "scale_after_matmul", match)
    assert not nkigym.matches_of(after, "scale_after_matmul")
    for node in after.statements_of("nc_transpose"):
        (source,) = after.writers_of(after[node].operands[0].var) or (None,)
        assert source is not None and after[source].op.name == "load"
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    np.testing.assert_allclose(nkigym.interpret(after, x=x, w=w), _reference(x, w), rtol=1e-10, atol=1e-12)


def test_saturate_moves_the_scale_past_every_matmul() -> None:
    """``scale_after_matmul`` is in the default pipeline: the saturated program transposes
    tiles of ``x`` as loaded and scales every product."""
    shapes = {"x": (256, 512), "w": (512, 1024)}
    program = nkigym.saturate(nkigym.tile(rmsnorm_matmul, shapes, dtype="float64"))
    transposed = {program[n].operands[0].var for n in program.statements_of("nc_transpose")}
    assert transposed and all(program[program.writers_of(v)[0]].op.name == "load" for v in transposed)
    products = {program[n].dst.var for n in program.statements_of("nc_matmul")}
    scaled = {program[n].operands[0].var for n in program.statements_of("tensor_column")}
    assert products and products <= scaled
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal(shapes["x"]), rng.standard_normal(shapes["w"])
    np.testing.assert_allclose(nkigym.interpret(program, x=x, w=w), _reference(x, w), rtol=1e-10, atol=1e-12)
