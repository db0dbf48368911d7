"""The calibration kernels (benchmarks/calibration_kernels.py) compute A.T @ B.

They run here at small shapes, where every structure still has all its loops; the
calibration itself (2048^3, model vs published figures) is a benchmark, not a test.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))

from calibration_kernels import LADDER, TUTORIAL

from nkigym_graph.nki_sim import profile

BF16 = np.dtype(ml_dtypes.bfloat16)
KERNELS = [(name, source) for name, source, _ in LADDER] + [(name, source) for name, source, _ in TUTORIAL]


@pytest.mark.parametrize(("name", "source"), KERNELS, ids=[name for name, _ in KERNELS])
def test_calibration_kernel_matches_numpy(name: str, source: str) -> None:
    k, m, n = (128, 128, 512) if name.startswith("basic") else (256, 1024, 1024)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((k, m)).astype(BF16)
    b = rng.standard_normal((k, n)).astype(BF16)
    prof = profile(source, a, b)
    want = a.astype(np.float32).T @ b.astype(np.float32)
    got = np.asarray(prof.outputs, dtype=np.float32)
    assert np.abs(got - want).max() <= 1e-2 * np.abs(want).max()
    assert prof.flops == 2.0 * k * m * n
    assert 0 < prof.mfu < 1
