"""Tiling: write a tensor function with nkigym ops, tile it, check it against numpy.

python examples/tiling.py
"""

import numpy as np

import nkigym_graph as nkigym


def matmul_bias_tanh(a, b, bias):
    """tanh(a.T @ b + bias): a is [K, M], b is [K, N], bias is [M, N]."""
    return nkigym.activation(nkigym.tensor_tensor(nkigym.nc_matmul(a, b), bias, op="add"), op="tanh")


def main() -> None:
    shapes = {"a": (300, 200), "b": (300, 1000), "bias": (200, 1000)}  # ragged: 300 = 2x128 + 44
    program = nkigym.tile(matmul_bias_tanh, shapes, dtype=np.float64)
    print(f"tiled into {len(program)} statements on {program.target.name}; first block:")
    print("\n".join(str(program).splitlines()[:12]))

    rng = np.random.default_rng(0)
    inputs = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    reference = matmul_bias_tanh(**inputs)  # the same function, run eagerly on numpy
    error = np.abs(nkigym.interpret(program, **inputs) - reference).max()
    print(f"max |tiled - numpy| = {error:.2e}")
    assert error < 1e-9


if __name__ == "__main__":
    main()
