"""Loop rolling: regular repetition becomes ``for`` loops with affine indices, irregular
code stays straight-line, and rolled kernels compute exactly what unrolled ones do."""

from __future__ import annotations

import numpy as np
import pytest
from nki_backend.nki_cases import CASES, Case, inputs, run, tiled, wide_matmul

import nkigym_graph as ng
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph_plugins.nki_backend.boxes import find_boxes
from nkigym_graph_plugins.nki_backend.ir import Affine
from nkigym_graph_plugins.nki_backend.render import LoopVar, slot_text


def _body_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_tiled_matmul_rolls_into_three_nested_loops() -> None:
    artifact = ng.emit_artifact(tiled_matmul(512, 512, 512), backend="nki")
    lines = _body_lines(artifact.text)
    loops = [line for line in lines if line.startswith("for ")]
    assert loops == ["for i0 in range(4):", "for i1 in range(4):", "for i2 in range(4):"]
    assert "nisa.dma_copy(dst=tensor_0, src=a[128 * i2:128 * i2 + 128, 128 * i0:128 * i0 + 128])" in lines
    assert "nisa.nc_matmul(dst=tensor_2, stationary=tensor_0, moving=tensor_1)" in lines
    assert artifact.facts["lines"] < 40 < artifact.facts["lines_unrolled"]


def test_ragged_tiles_stay_outside_the_loops(rng: np.random.Generator) -> None:
    program = tiled_matmul(300, 128, 300)  # tiles of 128, 128, 44 on both axes
    arrays = inputs(program, rng)
    artifact, out, _ = run(program, arrays)
    np.testing.assert_allclose(out, arrays["a"].T @ arrays["b"], rtol=1e-4, atol=1e-4)
    assert artifact.facts["loops"] >= 1
    assert "nl.ndarray((44, 44), dtype=nl.float32, buffer=nl.psum)" in artifact.text


def test_single_tile_program_is_straight_line() -> None:
    artifact = ng.emit_artifact(tiled_matmul(128, 128, 128), backend="nki")
    assert artifact.facts["loops"] == 0
    assert artifact.facts["lines"] == artifact.facts["lines_unrolled"]


def test_roll_loops_false_gives_straight_line_code() -> None:
    artifact = ng.emit_artifact(tiled_matmul(256, 256, 256), backend="nki", roll_loops=False)
    assert artifact.facts["loops"] == 0 and "range(" not in artifact.text
    assert artifact.facts["lines"] == artifact.facts["lines_unrolled"]


@pytest.mark.parametrize("saturate", [False, True], ids=["tiled", "saturated"])
@pytest.mark.parametrize(
    "case",
    [
        c
        for c in CASES
        if c.id in ("matmul_384x512x512", "matmul_1000x200x128", "double_matmul", "matmul_tanh", "row_sum")
    ],
    ids=lambda c: c.id,
)
def test_rolled_equals_unrolled(case: Case, saturate: bool, rng: np.random.Generator) -> None:
    program = tiled(case, saturate=saturate)
    arrays = inputs(program, rng)
    rolled_art, rolled, rolled_report = run(program, arrays)
    _, unrolled, unrolled_report = run(program, arrays, roll_loops=False)
    np.testing.assert_array_equal(rolled, unrolled)
    assert rolled_report.instruction_counts == unrolled_report.instruction_counts
    assert rolled_report.peak_sbuf_bytes == unrolled_report.peak_sbuf_bytes
    assert rolled_art.facts["lines"] <= rolled_art.facts["lines_unrolled"]


def test_tiles_read_after_their_loop_are_collected_in_lists(rng: np.random.Generator) -> None:
    program = wide_matmul(2048, 2560, 512)  # SBUF overflow: the A loads are split per row block
    arrays = inputs(program, rng)
    artifact, out, _ = run(program, arrays)
    _, unrolled, _ = run(program, arrays, roll_loops=False)
    np.testing.assert_array_equal(out, unrolled)
    assert "_tiles = []" in artifact.text and "_tiles.append(" in artifact.text


def test_boxes_find_a_two_dimensional_grid() -> None:
    # 3 rows x 4 columns of blocks, column stride 512, row stride 128, after one odd block
    vectors = [[7, 7]] + [[128 * r, 512 * c] for r in range(3) for c in range(4)]
    (box,) = find_boxes(vectors, block_lines=5)
    assert (box.start, box.outer, box.inner) == (1, 3, 4)
    assert box.d_inner == (0, 512) and box.d_outer == (128, 0)


def test_boxes_prefer_the_straight_pairing_of_a_peeled_grid() -> None:
    # tiles (0,1), (1,0), (1,1), ..., (3,1): row-major pairs start one block late
    vectors = [[0, 512]] + [[128 * r, 512 * c] for r in range(1, 4) for c in range(2)]
    (box,) = find_boxes(vectors, block_lines=5)
    assert (box.start, box.outer, box.inner, box.d_inner) == (1, 3, 2, (0, 512))


def test_boxes_fit_slot_indices_modulo_their_pool() -> None:
    # slots 2, 3, 0, 1, 2, 3 of a pool of 4: not affine, affine modulo 4
    slots = [[2], [3], [0], [1], [2], [3]]
    assert [b.count for b in find_boxes(slots, block_lines=5)] != [6]
    (box,) = find_boxes(slots, block_lines=5, moduli=[4])
    assert (box.start, box.count, box.d_inner) == (0, 6, (1,))
    # a column that is not a slot index still has to be affine
    mixed = [[s, 128 * s] for (s,) in slots]
    assert all(b.count < 6 for b in find_boxes(mixed, block_lines=5, moduli=[4, 0]))


def test_boxes_fit_a_grid_whose_rows_rotate_the_slots() -> None:
    # 3 rows of 2 blocks over a pool of 5: slot 2 * row + column, wrapping in the last row
    vectors = [[(2 * r + c) % 5, 512 * c] for r in range(3) for c in range(2)]
    (box,) = find_boxes(vectors, block_lines=5, moduli=[5, 0])
    assert (box.outer, box.inner, box.d_outer, box.d_inner) == (3, 2, (2, 0), (1, 512))


@pytest.mark.parametrize(
    "index,counts,text",
    [
        (Affine(2, ((1, 1),)), [2], "i0 + 2"),  # 2, 3: never wraps
        (Affine(2, ((1, 1),)), [4], "(i0 + 2) % 4"),  # 2, 3, 0, 1
        (Affine(0, ((1, 1),)), [8], "i0 % 4"),
        (Affine(3, ((1, 3),)), [4], "-i0 + 3"),  # 3, 2, 1, 0: coefficient 3 is -1 modulo 4
        (Affine(1, ((1, 2), (2, 1))), [2, 2], "(2 * i0 + i1 + 1) % 4"),
        (Affine(1, ((1, 1), (2, 2))), [2, 1], "i0 + 2 * i1 + 1"),  # the inner loop runs once
    ],
)
def test_slot_indices_print_modulo_only_where_they_wrap(index: Affine, counts: list[int], text: str) -> None:
    loops = {depth + 1: LoopVar(f"i{depth}", count) for depth, count in enumerate(counts)}  # loop ids 1, 2
    assert slot_text(index, 4, loops) == text
    for values in np.ndindex(*counts):  # the printed index is the slot, modulo 4
        env = {f"i{depth}": v for depth, v in enumerate(values)}
        expected = (index.const + sum(c * values[loop - 1] for loop, c in index.terms)) % 4
        assert eval(text, {}, env) % 4 == expected and 0 <= eval(text, {}, env) < 4
