"""Seed 001's "Before" program is exactly what tiling a (128,128) @ (128,256) matmul gives."""

from __future__ import annotations

import numpy as np

from nkigym_graph import interpret, parse_program
from nkigym_graph.tiling import nc_matmul, tile

SEED_001_BEFORE = """\
def tiled_matmul(a, b):
    output = nkigym.ndarray((128, 256), dtype=np.float32)

    tensor_0 = a[0:128, 0:128]
    tensor_1 = b[0:128, 0:128]
    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    output[0:128, 0:128] = tensor_2

    tensor_3 = a[0:128, 0:128]
    tensor_4 = b[0:128, 128:256]
    tensor_5 = nkigym.nc_matmul(tensor_3, tensor_4)
    output[0:128, 128:256] = tensor_5

    return output
"""


def tiled_matmul(a, b):
    return nc_matmul(a, b)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def test_same_canonical_hash_as_seed() -> None:
    program = tile(tiled_matmul, {"a": (128, 128), "b": (128, 256)})
    assert program.canonical_hash == parse_program(SEED_001_BEFORE).canonical_hash


def test_same_text_as_seed() -> None:
    program = tile(tiled_matmul, {"a": (128, 128), "b": (128, 256)})
    assert _lines(str(program)) == _lines(SEED_001_BEFORE)


def test_shapes_in_parameter_order() -> None:
    program = tile(tiled_matmul, [(128, 128), (128, 256)])
    assert _lines(str(program)) == _lines(SEED_001_BEFORE)


def test_seed_program_computes_the_matmul(rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((128, 128)), rng.standard_normal((128, 256))
    program = tile(tiled_matmul, {"a": a.shape, "b": b.shape}, dtype=np.float64)
    np.testing.assert_allclose(interpret(program, a=a, b=b), a.T @ b, rtol=1e-12, atol=1e-12)
