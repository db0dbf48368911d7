"""``reduction_merge``: neighbouring partial reductions fold into one, as its docstring's
before/after texts say, within the op's limit, and never change what the program computes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nkigym_graph as nkigym

PIPELINE = ["data_reuse", "operand_merge", "reduction_merge", "dead_code"]


def _lines(program: nkigym.Program) -> list[str]:
    return [line.strip() for line in str(program).splitlines() if line.strip()]


def test_sum_chunks_accumulated_fold_into_one() -> None:
    before = nkigym.parse_fragment(
        """
tensor_3 = nkigym.tensor_reduce(tensor_0[0:128, 0:128], op="sum")
tensor_3[0:128, 0:1] += nkigym.tensor_reduce(tensor_0[0:128, 128:256], op="sum")
out[0:128, 0:1] = tensor_3
""",
        shapes={"tensor_0": (128, 256), "out": (128, 1)},
    )
    (match,) = nkigym.matches_of(before, "reduction_merge")
    after = nkigym.apply(before, "reduction_merge", match)
    assert 'tensor_3 = nkigym.tensor_reduce(tensor_0[0:128, 0:256], op="sum")' in _lines(after)
    assert len(after) == 2


def test_max_chunks_folded_through_maximum_become_one() -> None:
    before = nkigym.parse_fragment(
        """
tensor_1 = nkigym.tensor_reduce(tensor_0[0:128, 0:128], op="max")
tensor_2 = nkigym.tensor_reduce(tensor_0[0:128, 128:256], op="max")
tensor_4 = nkigym.tensor_tensor(tensor_1, tensor_2, op="maximum")
out[0:128, 0:1] = tensor_4
""",
        shapes={"tensor_0": (128, 256), "out": (128, 1)},
    )
    (match,) = nkigym.matches_of(before, "reduction_merge")
    after = nkigym.apply(before, "reduction_merge", match)
    assert _lines(after) == [
        'tensor_1 = nkigym.tensor_reduce(tensor_0[0:128, 0:256], op="max")',
        "out[0:128, 0:1] = tensor_1",
    ]


def test_fold_chain_is_reassociated() -> None:
    before = nkigym.parse_fragment(
        """
tensor_1 = nkigym.tensor_reduce(tensor_9, op="max")
tensor_2 = nkigym.tensor_reduce(tensor_0[0:128, 0:128], op="max")
tensor_3 = nkigym.tensor_tensor(tensor_1, tensor_2, op="maximum")
tensor_4 = nkigym.tensor_reduce(tensor_0[0:128, 128:256], op="max")
tensor_5 = nkigym.tensor_tensor(tensor_3, tensor_4, op="maximum")
out[0:128, 0:1] = tensor_5
""",
        shapes={"tensor_0": (128, 256), "tensor_9": (128, 64), "out": (128, 1)},
    )
    (match,) = nkigym.matches_of(before, "reduction_merge")
    after = nkigym.apply(before, "reduction_merge", match)
    assert 'tensor_2 = nkigym.tensor_reduce(tensor_0[0:128, 0:256], op="max")' in _lines(after)
    assert "out[0:128, 0:1] = tensor_3" in _lines(after)


def test_partial_read_in_between_blocks_the_merge() -> None:
    before = nkigym.parse_fragment(
        """
tensor_3 = nkigym.tensor_reduce(tensor_0[0:128, 0:128], op="sum")
early[0:128, 0:1] = tensor_3
tensor_3[0:128, 0:1] += nkigym.tensor_reduce(tensor_0[0:128, 128:256], op="sum")
out[0:128, 0:1] = tensor_3
""",
        shapes={"tensor_0": (128, 256), "out": (128, 1), "early": (128, 1)},
    )
    assert list(nkigym.matches_of(before, "reduction_merge")) == []


def test_chunks_of_different_tiles_do_not_merge() -> None:
    before = nkigym.parse_fragment(
        """
tensor_3 = nkigym.tensor_reduce(tensor_0, op="sum")
tensor_3[0:128, 0:1] += nkigym.tensor_reduce(tensor_1, op="sum")
out[0:128, 0:1] = tensor_3
""",
        shapes={"tensor_0": (128, 128), "tensor_1": (128, 128), "out": (128, 1)},
    )
    assert list(nkigym.matches_of(before, "reduction_merge")) == []


def matmul(a, b):
    return nkigym.nc_matmul(a, b)


def test_matmul_k_chains_stay_within_the_limit() -> None:
    shapes = {"a": (256, 128), "b": (256, 128)}
    trn2 = nkigym.saturate(nkigym.tile(matmul, shapes), PIPELINE)
    assert len(trn2.statements_of("nc_matmul")) == 2  # K 128 on trn2: the chain stays
    wormhole = nkigym.saturate(nkigym.tile(matmul, shapes, target="wormhole_b0"), PIPELINE)
    sizes = {
        wormhole[n].operands[0].slices[0][1] - wormhole[n].operands[0].slices[0][0]
        for n in wormhole.statements_of("nc_matmul")
    }
    assert max(sizes) == 256  # K up to 256 (8 tiles of 32) on wormhole_b0


def row_stats(x):
    """``x / sum - max + (min + mean)``, each statistic of the whole row."""
    total = nkigym.tensor_reduce(x, op="sum")
    peak = nkigym.tensor_reduce(x, op="max")
    low_and_mean = nkigym.tensor_tensor(
        nkigym.tensor_reduce(x, op="min"), nkigym.tensor_reduce(x, op="mean"), op="add"
    )
    spread = nkigym.tensor_tensor(nkigym.tensor_tensor(x, total, op="divide"), peak, op="subtract")
    return nkigym.tensor_scalar(spread, low_and_mean, op="add")


@pytest.mark.parametrize("shape", [(128, 512), (200, 700)])
def test_saturation_leaves_one_reduction_per_row_block(shape: tuple[int, int]) -> None:
    program = nkigym.saturate(nkigym.tile(row_stats, {"x": shape}), PIPELINE, check=True)
    blocks = -(-shape[0] // 128)
    assert len(program.statements_of("tensor_reduce")) == 4 * blocks
    folds = [n for n in program.statements_of("tensor_tensor") if program[n].attr("op") != "add"]
    assert folds == []


@settings(max_examples=25, deadline=None, derandomize=True)
@given(r=st.integers(1, 300), c=st.integers(1, 1500), seed=st.integers(0, 9))
def test_saturation_with_reduction_merge_keeps_the_numbers(r: int, c: int, seed: int) -> None:
    program = nkigym.tile(row_stats, {"x": (r, c)}, dtype="float64")
    saturated = nkigym.saturate(program, PIPELINE)
    x = np.random.default_rng(seed).uniform(0.5, 2.0, (r, c))
    np.testing.assert_allclose(nkigym.interpret(saturated, x=x), nkigym.interpret(program, x=x), rtol=1e-12)
    np.testing.assert_allclose(nkigym.interpret(saturated, x=x), row_stats(x), rtol=1e-12)


def test_chunks_of_neighbouring_loads_merge_with_their_loads() -> None:
    def row_max(x):
        return nkigym.tensor_reduce(x, op="max")

    program = nkigym.tile(row_max, {"x": (128, 384)})
    assert len(program.loads_of("x")) == 3
    first = nkigym.matches_of(program, "reduction_merge")[0]
    after = nkigym.apply(program, "reduction_merge", first)
    assert "tensor_0 = x[0:128, 0:256]" in _lines(after)
    assert 'tensor_1 = nkigym.tensor_reduce(tensor_0, op="max")' in _lines(after)
    done = nkigym.saturate(program, ["reduction_merge", "dead_code"])
    assert len(done.loads_of("x")) == 1 and len(done.statements_of("tensor_reduce")) == 1
    x = np.random.default_rng(0).standard_normal((128, 384))
    np.testing.assert_allclose(nkigym.interpret(done, x=x), x.max(axis=1, keepdims=True), rtol=1e-6)
