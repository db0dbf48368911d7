"""Checks run with one BLAS thread; blocks nest, and the last to close restores the limit."""

from __future__ import annotations

import numpy as np  # loads numpy's BLAS
import pytest
from threadpoolctl import threadpool_info

from nkigym_graph.numeric.blas import one_blas_thread


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_nested_blocks_hold_one_thread_until_the_outermost_closes() -> None:
    before = _blas_threads()
    if not before:
        pytest.skip(f"no BLAS thread pool found for numpy {np.__version__}")
    with one_blas_thread():
        assert set(_blas_threads()) == {1}
        with one_blas_thread():
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {1}  # the inner block left the outer's limit alone
    assert _blas_threads() == before
