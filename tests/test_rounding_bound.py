"""The first-order bound of a kernel's rounding (``numeric.rounding_bound``) holds element
by element against numpy computing as a kernel does: float32 arithmetic, results stored in
the kernel's dtype. A share of each element alone does not: a sum that cancels keeps the
rounding of its terms."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import nkigym_graph as ng
from nkigym_graph.ir.ops.registry import get_op
from nkigym_graph.numeric.rounding_bound import contracts, rounding_bound

ENGINE = 2.0**-20
SHAPES = {"a": (256, 128), "b": (256, 256), "c": (128, 128)}


def tanh_then_matmul(a, b, c):  # type: ignore[no-untyped-def]
    return ng.nc_matmul(ng.activation(ng.nc_matmul(a, b), op="tanh"), c)


def as_a_kernel(a: np.ndarray, b: np.ndarray, c: np.ndarray, storage: np.dtype) -> np.ndarray:
    """``tanh(a.T @ b).T @ c`` in float32, each result stored in ``storage``."""

    def store(x: np.ndarray) -> np.ndarray:
        return x.astype(storage).astype(np.float32)

    return store(store(np.tanh(store(a.T @ b))).T @ c).astype(np.float64)


def test_the_bound_holds_where_a_share_of_the_element_does_not(rng: np.random.Generator) -> None:
    program = ng.tile(tanh_then_matmul, SHAPES)
    inputs = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in SHAPES.items()}
    for storage in (np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16)):
        held = {name: x.astype(storage).astype(np.float32) for name, x in inputs.items()}
        exact, bound = rounding_bound(program, held, storage, ENGINE)
        error = np.abs(as_a_kernel(*held.values(), storage) - exact["output"])
        assert (error <= bound["output"]).all()
        assert (error > 1e-4 * np.abs(exact["output"])).any()


def test_contractions_are_told_by_their_axes() -> None:
    assert contracts(get_op("nc_matmul")) and contracts(get_op("tensor_reduce"))
    assert not any(
        contracts(get_op(name)) for name in ("nc_transpose", "tensor_column", "activation", "load")
    )


def test_the_bound_holds_the_live_tiles_only(rng: np.random.Generator) -> None:
    """Tiles are dropped after their last use: a limit below every tile's sum but above
    the live peak is enough, and the returned output is the same."""
    import pytest

    from nkigym_graph.errors import ResourceLimitError
    from nkigym_graph.numeric.memory_limit import interpreter_bytes

    program = ng.tile(tanh_then_matmul, SHAPES)
    held = {name: rng.standard_normal(shape) for name, shape in SHAPES.items()}
    live = 2 * interpreter_bytes(program, np.dtype(np.float64), True, program.returns)
    every = 2 * interpreter_bytes(program, np.dtype(np.float64), True)
    assert live < every
    exact, bound = rounding_bound(program, held, np.dtype(np.float32), ENGINE, max_bytes=live)
    unlimited = rounding_bound(program, held, np.dtype(np.float32), ENGINE, max_bytes=None)
    assert np.array_equal(exact["output"], unlimited[0]["output"])
    assert np.array_equal(bound["output"], unlimited[1]["output"])
    assert set(exact) == {*SHAPES, "output"}
    with pytest.raises(ResourceLimitError):
        rounding_bound(program, held, np.dtype(np.float32), ENGINE, max_bytes=live - 1)
