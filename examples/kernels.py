"""User functions for the command-line walkthrough (``nkigym-graph tile examples/kernels.py:matmul``).

python examples/kernels.py   # runs each function on numpy as a reference
"""

import numpy as np

import nkigym_graph as nkigym


def matmul(a, b):
    """a.T @ b, with a [K, M] and b [K, N]."""
    return nkigym.nc_matmul(a, b)


def matmul_tanh(a, b):
    """tanh(a.T @ b): the activation runs once per output tile, after the K accumulation."""
    return nkigym.activation(nkigym.nc_matmul(a, b), op="tanh")


def double_matmul(a, b, c):
    """(a.T @ b).T @ c."""
    return nkigym.nc_matmul(nkigym.nc_matmul(a, b), c)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((256, 256)) for _ in range(3))
    assert np.allclose(matmul(a, b), a.T @ b)
    assert np.allclose(matmul_tanh(a, b), np.tanh(a.T @ b))
    assert np.allclose(double_matmul(a, b, c), (a.T @ b).T @ c)
    print("kernels.py: matmul, matmul_tanh, double_matmul agree with numpy")
