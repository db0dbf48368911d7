"""The evaluator's data formats (``nkigym_graph.buda.quantize``) on hand-computed values.

Bfp8_b as Tenstorrent documents it: 16 values share the largest 8-bit exponent; each keeps a
sign and 7 magnitude bits (the hidden 1 made explicit), so a block whose largest value is in
[1, 2) holds multiples of 1/64 up to 127/64.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from nkigym_graph.buda.quantize import BLOCK, block_float, quantize


def block(*values: float) -> np.ndarray:
    """One 16-value block (one row), zero-padded."""
    row = np.zeros((1, BLOCK))
    row[0, : len(values)] = values
    return row


def test_bfp8_b_keeps_multiples_of_the_block_step() -> None:
    got = quantize(block(1.0, 0.1, -0.3, 3.0 / 1024, 1.5), "Bfp8_b")[0, :5]
    # step 2**(0 - 6) = 1/64: 0.1 -> 6.4/64 -> 6/64, -0.3 -> -19.2/64 -> -19/64, 3/1024 -> 0.19/64 -> 0
    assert got.tolist() == [1.0, 6 / 64, -19 / 64, 0.0, 1.5]


def test_bfp8_b_rounds_half_up_in_magnitude() -> None:
    # 2.5/64 and -2.5/64 sit halfway between steps: the host rounds the magnitude up
    got = quantize(block(1.0, 2.5 / 64, -2.5 / 64), "Bfp8_b")[0, :3]
    assert got.tolist() == [1.0, 3 / 64, -3 / 64]


def test_bfp8_b_saturates_at_127_steps() -> None:
    # 1.999 has the exponent of 1.0 and 127.94 steps: it saturates at 127/64 instead of
    # carrying into the next exponent
    assert quantize(block(1.999), "Bfp8_b")[0, 0] == 127 / 64


def test_each_block_of_16_has_its_own_exponent() -> None:
    row = np.concatenate([block(1024.0, 1.0), block(1.0, 1.0 / 128)], axis=1)
    got = quantize(row, "Bfp8_b")[0]
    assert got[1] == 0.0  # 1.0 next to 1024 (step 16) vanishes
    assert got[BLOCK + 1] == 1 / 64  # 1/128 next to 1.0 is half a step (1/64): rounds up
    assert got[0] == 1024.0 and got[BLOCK] == 1.0


def test_blocks_run_along_rows_not_columns() -> None:
    column = np.zeros((BLOCK, BLOCK))
    column[:, 0] = [1.0] + [0.1] * (BLOCK - 1)
    got = quantize(column, "Bfp8_b")
    # every row is its own block: 0.1 keeps its own exponent (step 2**-10 for [1/16, 1/8))
    assert got[1, 0] == pytest.approx(0.1, abs=2.0**-10)


def test_zero_and_an_all_zero_block() -> None:
    assert np.array_equal(quantize(np.zeros((2, 32)), "Bfp8_b"), np.zeros((2, 32)))


def test_block_formats_need_whole_blocks() -> None:
    with pytest.raises(ValueError, match="16-value blocks"):
        block_float(np.zeros((1, 8)), 7)


def test_bfp4_b_and_bfp2_b_keep_fewer_bits() -> None:
    values = block(1.0, 0.6, 0.3)
    assert quantize(values, "Bfp4_b")[0, :3].tolist() == [1.0, 0.5, 0.25]  # steps of 1/4
    assert quantize(values, "Bfp2_b")[0, :3].tolist() == [1.0, 1.0, 0.0]  # one bit: 0 or 1


def test_float_formats_round_to_nearest() -> None:
    x = np.array([[1 + 2**-9, 1 + 3 * 2**-9, 1 + 2**-12, 1e-30]])
    assert quantize(x, "Float16_b").tolist() == x.astype(ml_dtypes.bfloat16).astype(np.float64).tolist()
    assert quantize(x, "Float16_b")[0, 0] == 1.0  # a tie rounds to even
    assert quantize(x, "Float16")[0, 2] == 1.0 and quantize(x, "Float16")[0, 3] == 0.0
    assert quantize(x, "Float32")[0, 2] == 1 + 2**-12


def test_formats_without_a_model_leave_values_alone() -> None:
    x = np.array([[0.1, 7.0]])
    assert quantize(x, "Int8").tolist() == [[0.1, 7.0]]
    assert quantize(x, None).tolist() == [[0.1, 7.0]]


def test_bfp8_b_keeps_inf_and_nan() -> None:
    # tt-metal's host packing gives a block holding inf or nan the exponent 255; unpacked,
    # inf (mantissa 0) is inf again, a quiet nan a nan, and the block's small values vanish
    got = quantize(block(np.inf, -np.inf, np.nan, 1.0, 2.0**127), "Bfp8_b")[0, :5]
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])
    assert got[3] == 0.0 and got[4] == 2.0**127


@pytest.mark.parametrize("df", ["Bfp8_b", "Bfp4_b", "Bfp8", "Bfp4", "Bfp2"])
def test_block_formats_propagate_inf_and_nan(df: str) -> None:
    got = quantize(block(np.inf, -np.inf, np.nan, 0.5), df)[0, :4]
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2]), (df, got)
    assert np.isfinite(quantize(block(1.0, 0.5), df)).all()


def test_a_block_without_inf_or_nan_stays_finite() -> None:
    big = block(3.0e38, -3.0e38, 1.0)
    got = quantize(big, "Bfp8_b")[0, :3]
    assert np.isfinite(got).all() and got[0] == pytest.approx(3.0e38, rel=2**-6) and got[2] == 0.0
