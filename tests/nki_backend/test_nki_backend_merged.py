"""Merged programs emit merged instructions: the saturated 1024^3 matmul uses 512-wide
moving tiles, loads every input region exactly once, and rolls into a few loops."""

from __future__ import annotations

import re

import numpy as np
import pytest
from nki_backend.nki_cases import TRANSFORMS, run

import nkigym_graph as ng
from nkigym_graph.ir.synthetic import tiled_matmul

SIZE = 1024


@pytest.fixture(scope="module")
def saturated() -> ng.Program:
    return ng.saturate(tiled_matmul(SIZE, SIZE, SIZE), TRANSFORMS)


@pytest.fixture(scope="module")
def arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {name: rng.standard_normal((SIZE, SIZE)).astype(np.float32) for name in ("a", "b")}


def _covered_once(program: ng.Program, param: str) -> bool:
    """The loads of ``param`` partition it: disjoint regions covering every element once."""
    count = np.zeros(program.parameter(param).shape, dtype=np.int64)
    for node in program.loads_of(param):
        count[tuple(slice(a, b) for a, b in program[node].operands[0].slices)] += 1
    return bool((count == 1).all())


def test_saturated_matmul_is_correct_with_512_wide_matmuls(saturated: ng.Program, arrays) -> None:
    artifact, out, report = run(saturated, arrays)
    np.testing.assert_allclose(out, arrays["a"].T @ arrays["b"], rtol=1e-4, atol=2e-3)
    moving = re.findall(
        r"moving=\w+(?:\[[^\]]*\])?\[0:128, (\d+) \* i\d+:\1 \* i\d+ \+ (\d+)\]", artifact.text
    )
    assert moving and all(int(a) == int(b) == 512 for a, b in moving)
    tiles = (SIZE // 128) * (SIZE // 512)
    assert report.instruction_counts["nisa.nc_matmul"] == tiles * (
        SIZE // 128
    )  # one matmul per N=512 tile and K
    assert report.instruction_counts["nisa.tensor_copy"] == tiles  # one PSUM eviction per output tile


def test_saturated_matmul_loads_each_input_region_once(saturated: ng.Program, arrays) -> None:
    _, _, report = run(saturated, arrays)
    loads = len(saturated.statements_of("load"))
    stores = len(saturated.statements_of("store"))
    assert report.instruction_counts["nisa.dma_copy"] == loads + stores
    assert _covered_once(saturated, "a") and _covered_once(saturated, "b")
    assert loads == 2 * (SIZE // 128)  # one wide load per K chunk of each operand


def test_saturated_matmul_rolls_into_loops(saturated: ng.Program) -> None:
    facts = ng.emit_artifact(saturated, backend="nki").facts  # program order
    assert facts["lines_unrolled"] > 400
    assert facts["lines"] <= 40
    assert facts["loops"] >= 3
    assert facts["instructions"]["nc_matmul"] == 128 and facts["instructions"]["dma_copy"] == 32
    pipelined = ng.emit_artifact(saturated, backend="nki", reorder=True).facts  # list-scheduled
    assert pipelined["loops"] >= 1 and pipelined["lines"] < pipelined["lines_unrolled"]
    assert pipelined["instructions"] == facts["instructions"]  # the same work, reordered


def test_rolled_and_unrolled_kernels_agree(saturated: ng.Program, arrays) -> None:
    _, rolled, rolled_report = run(saturated, arrays)
    _, unrolled, unrolled_report = run(saturated, arrays, roll_loops=False)
    np.testing.assert_array_equal(rolled, unrolled)
    assert rolled_report.instruction_counts == unrolled_report.instruction_counts
