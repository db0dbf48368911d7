"""Tiled matmuls against numpy: 1 to 4 tiles per axis, ragged sizes, statement structure."""

from __future__ import annotations

import numpy as np
import pytest

from nkigym_graph import WORMHOLE_B0, interpret
from nkigym_graph.tiling import nc_matmul, tile


def matmul(a, b):
    return nc_matmul(a, b)


def _ntiles(size: int, tile_size: int = 128) -> int:
    return -(-size // tile_size)


# (M, K, N): every axis between 1 and 4 tiles of 128, with ragged last tiles, plus K=1000.
SIZES = [
    (128, 128, 128),
    (200, 256, 384),
    (512, 100, 200),
    (384, 512, 512),
    (64, 384, 130),
    (256, 1000, 96),
    (1000, 200, 128),
]


@pytest.mark.parametrize(("m", "k", "n"), SIZES)
def test_matmul_matches_numpy(m: int, k: int, n: int, rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((k, m)), rng.standard_normal((k, n))
    program = tile(matmul, {"a": (k, m), "b": (k, n)}, dtype=np.float64)
    got = interpret(program, a=a, b=b)
    np.testing.assert_allclose(got, matmul(a, b), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, a.T @ b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(("m", "k", "n"), SIZES)
def test_matmul_statement_counts(m: int, k: int, n: int) -> None:
    program = tile(matmul, {"a": (k, m), "b": (k, n)})
    tiles = _ntiles(m) * _ntiles(n)
    assert len(program.statements_of("store")) == tiles
    assert len(program.statements_of("load")) == 2 * tiles * _ntiles(k)
    products = [program[i] for i in program.statements_of("nc_matmul")]
    assert len(products) == tiles * _ntiles(k)
    assert sum(not s.accumulate for s in products) == tiles  # the first K chunk defines


def test_ragged_tiles_are_smaller_and_within_limits() -> None:
    program = tile(matmul, {"a": (1000, 200), "b": (1000, 128)})
    k_ranges = {program[i].operands[0].slices[0] for i in program.loads_of("a")}
    assert sorted(k_ranges) == [(s, min(s + 128, 1000)) for s in range(0, 1000, 128)]
    last = [program[i] for i in program.statements_of("nc_matmul")][-1]
    assert last.operands[0].slices == ((0, 104), (0, 72))  # K 1000 = 7 x 128 + 104, M 200 = 128 + 72
    for node in program.statements_of("nc_matmul"):
        assert program[node].op.limit_violations(program[node], program.target) == []


def test_k_accumulates_into_one_tile_in_order() -> None:
    program = tile(matmul, {"a": (384, 128), "b": (384, 128)})
    lines = [line.strip() for line in str(program).splitlines() if line.strip()]
    assert lines[2:] == [
        "tensor_0 = a[0:128, 0:128]",
        "tensor_1 = b[0:128, 0:128]",
        "tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)",
        "tensor_3 = a[128:256, 0:128]",
        "tensor_4 = b[128:256, 0:128]",
        "tensor_2[0:128, 0:128] += nkigym.nc_matmul(tensor_3, tensor_4)",
        "tensor_5 = a[256:384, 0:128]",
        "tensor_6 = b[256:384, 0:128]",
        "tensor_2[0:128, 0:128] += nkigym.nc_matmul(tensor_5, tensor_6)",
        "output[0:128, 0:128] = tensor_2",
        "return output",
    ]


def test_parallel_loops_outer_in_output_axis_order() -> None:
    program = tile(matmul, {"a": (128, 256), "b": (128, 384)})
    regions = [program[i].operands[1].slices for i in program.statements_of("store")]
    assert regions == [((m, m + 128), (n, n + 128)) for m in (0, 128) for n in (0, 128, 256)]


def test_names_follow_emission_order() -> None:
    program = tile(matmul, {"a": (256, 256), "b": (256, 256)})
    defined = [
        program[i].dst.var
        for i in range(1, len(program))
        if program[i].op.name != "store" and not program[i].accumulate
    ]
    assert defined == [f"tensor_{i}" for i in range(len(defined))]


def test_text_round_trip(rng: np.random.Generator) -> None:
    from nkigym_graph import parse_program

    program = tile(matmul, {"a": (300, 200), "b": (300, 130)})
    again = parse_program(str(program))
    assert again == program
    assert str(again) == str(program)


def test_wormhole_output_tiles_are_32_and_contractions_8_tiles(rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((300, 64)), rng.standard_normal((300, 40))
    program = tile(matmul, {"a": a.shape, "b": b.shape}, dtype=np.float64, target=WORMHOLE_B0)
    assert program.target is WORMHOLE_B0
    assert len(program.statements_of("store")) == 2 * 2  # M 64 = 2 x 32, N 40 = 32 + 8
    assert len(program.statements_of("nc_matmul")) == 2 * 2 * 2  # K 300 = 256 + 44
    assert (
        max(
            s.slices[1][1] - s.slices[1][0]
            for s in (program[i].operands[1] for i in program.statements_of("store"))
        )
        == 32
    )
    np.testing.assert_allclose(interpret(program, a=a, b=b), a.T @ b, rtol=1e-10, atol=1e-10)


def test_target_by_name() -> None:
    program = tile(matmul, {"a": (64, 64), "b": (64, 64)}, target="grayskull")
    assert program.target.name == "grayskull"
    assert len(program.statements_of("store")) == 4


def test_float32_output_dtype() -> None:
    program = tile(matmul, {"a": (128, 128), "b": (128, 128)})
    assert program.output_dtype == "float32"
    assert all(p.dtype == "float32" for p in program.params)


@pytest.mark.parametrize(("size", "expected"), [(1024, 8 * 8 * (8 * 3 + 1) + 1)])
def test_square_matmul_statement_count(size: int, expected: int) -> None:
    program = tile(matmul, {"a": (size, size), "b": (size, size)})
    assert len(program) == expected


@pytest.mark.slow
def test_4096_cubed_matmul_statement_count() -> None:
    program = tile(matmul, {"a": (4096, 4096), "b": (4096, 4096)})
    assert len(program) == 32 * 32 * (32 * 3 + 1) + 1
    assert program.statements[-1].operands[1].slices == ((3968, 4096), (3968, 4096))
