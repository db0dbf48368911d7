"""Kernels given as function objects, import isolation, and argument passing."""

from __future__ import annotations

import importlib.util
import inspect
import sys

import numpy as np
import pytest

from nkigym_graph.nki_sim import NKISimulationError, simulate

TILE = 128
"""A module constant the function-object kernels read."""


def scale_rows(x, factor):
    """A kernel defined in a module where ``nki`` is not importable."""
    import nki.isa as nisa
    import nki.language as nl

    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for r in nl.affine_range(rows // TILE):
        tile = nl.ndarray((TILE, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=x[r * TILE : (r + 1) * TILE, :])
        nisa.tensor_scalar(dst=tile, data=tile, op0=nl.multiply, operand0=factor)
        nisa.dma_copy(dst=out[r * TILE : (r + 1) * TILE, :], src=tile)
    return out


def _relu_tile(dst, src):
    """A same-file helper the function-object kernel below calls."""
    import nki.isa as nisa
    import nki.language as nl

    nisa.activation(dst=dst, op=nl.relu, data=src)


def relu_rows(x):
    import nki.isa as nisa
    import nki.language as nl

    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=x)
    _relu_tile(tile, tile)
    nisa.dma_copy(dst=out, src=tile)
    return out


def bad_matmul(x):
    import nki.isa as nisa
    import nki.language as nl

    a = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
    b = nl.ndarray((128, 1024), nl.float32, buffer=nl.sbuf)
    acc = nl.ndarray((128, 1024), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=a, moving=b)
    return x


def test_function_object_kernel_runs() -> None:
    x = np.random.default_rng(0).standard_normal((256, 40), dtype=np.float32)
    np.testing.assert_allclose(simulate(scale_rows, x, 2.5), x * 2.5, rtol=1e-6)


def test_function_object_calling_a_helper_of_its_module() -> None:
    x = np.random.default_rng(5).standard_normal((16, 8), dtype=np.float32)
    np.testing.assert_array_equal(simulate(relu_rows, x), np.maximum(x, 0))


def test_function_object_errors_name_lines_of_its_file() -> None:
    lines, first = inspect.getsourcelines(bad_matmul)
    bad = first + next(i for i, text in enumerate(lines) if "nc_matmul(" in text)
    with pytest.raises(NKISimulationError) as caught:
        simulate(bad_matmul, np.zeros((1, 1), np.float32))
    assert (caught.value.rule, caught.value.line) == ("matmul.n_limit", bad)


def test_nested_function_with_closure() -> None:
    offset = 3.0

    def add_offset(x):
        import nki.isa as nisa
        import nki.language as nl

        tile = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=x)
        nisa.tensor_scalar(dst=tile, data=tile, op0=nl.add, operand0=offset)
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=tile)
        return out

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(simulate(add_offset, x), x + offset)


def test_real_nki_is_untouched() -> None:
    before = {name for name in sys.modules if name.split(".")[0] in ("nki", "neuronxcc")}
    simulate(scale_rows, np.ones((128, 8), np.float32), 1.0)
    after = {name for name in sys.modules if name.split(".")[0] in ("nki", "neuronxcc")}
    assert after == before
    if importlib.util.find_spec("nki") is None:
        with pytest.raises(ModuleNotFoundError):
            import nki  # noqa: F401


NEURONXCC_STYLE = """
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc.nki.language import float32


@nki.jit
def double(x):
    out = nl.ndarray(x.shape, dtype=float32, buffer=nl.shared_hbm)
    tile = nl.ndarray(x.shape, dtype=float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=x)
    nisa.tensor_tensor(dst=tile, data1=tile, data2=tile, op=nl.add)
    nisa.dma_copy(dst=out, src=tile)
    return out


if __name__ == "__main__":
    raise SystemExit("not run inside the simulator")
"""


def test_older_neuronxcc_imports_resolve_to_the_simulator() -> None:
    x = np.random.default_rng(1).standard_normal((16, 16), dtype=np.float32)
    np.testing.assert_array_equal(simulate(NEURONXCC_STYLE, x), x + x)


IN_PLACE = """
import nki
import nki.isa as nisa
import nki.language as nl


def relu_tile(dst, src):
    nisa.activation(dst=dst, op=nl.relu, data=src)


@nki.jit
def relu_kernel(a_input, a_output):
    for i in range(a_input.shape[0] // 128):
        tile = nl.ndarray((128, 64), dtype=a_input.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=a_input[i * 128:(i + 1) * 128, :])
        result = nl.ndarray((128, 64), dtype=a_input.dtype, buffer=nl.sbuf)
        relu_tile(dst=result, src=tile)
        nisa.dma_copy(dst=a_output[i * 128:(i + 1) * 128, :], src=result)
    return a_output
"""


def test_kernel_writing_an_output_argument_in_place() -> None:
    x = np.random.default_rng(2).standard_normal((256, 64), dtype=np.float32)
    y = np.zeros_like(x)
    assert simulate(IN_PLACE, x, y) is y
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_errors_in_helper_functions_name_the_helper_line() -> None:
    x = np.zeros((128, 64), np.float32)
    y = np.zeros((128, 32), np.float32)
    with pytest.raises(NKISimulationError) as caught:
        simulate(IN_PLACE.replace("result = nl.ndarray((128, 64)", "result = nl.ndarray((128, 32)"), x, y)
    helper_line = IN_PLACE.splitlines().index("    nisa.activation(dst=dst, op=nl.relu, data=src)")
    assert (caught.value.rule, caught.value.line) == ("dst.shape", helper_line + 1)


def test_tuple_of_outputs() -> None:
    source = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def split(x):
    a = nl.ndarray((4, 2), dtype=x.dtype, buffer=nl.shared_hbm)
    b = nl.ndarray((4, 2), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=a, src=x[:, 0:2])
    nisa.dma_copy(dst=b, src=x[:, 2:4])
    return a, b
"""
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    first, second = simulate(source, x)
    np.testing.assert_array_equal(first, x[:, :2])
    np.testing.assert_array_equal(second, x[:, 2:])


WRITES_ITS_INPUT = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(a):
    t = nl.load(a)
    o = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(o, op=nl.exp, data=t)
    nl.store(a, o)
    return a
"""


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_a_kernel_that_writes_an_argument_writes_the_callers_array(layout: str) -> None:
    """Arguments are used in place; a Fortran-ordered array or a strided view ran as a
    private copy, so the kernel's writes never reached the caller's array."""
    base = np.zeros((128, 256), np.float32)
    array = {"C": base[:, :128].copy(), "F": np.asfortranarray(base[:, :128]), "strided": base[:, ::2]}[
        layout
    ]
    out = simulate(WRITES_ITS_INPUT, array)
    assert np.all(out == 1.0) and np.all(array == 1.0)
    if layout == "strided":
        assert np.all(base[:, ::2] == 1.0) and np.all(base[:, 1::2] == 0.0)


def test_a_lambda_is_refused_by_name() -> None:
    """A lambda's source is the line around it: re-executed as the kernel, it failed with
    an unrelated ``NameError`` (here: ``simulate`` is not defined)."""
    with pytest.raises(NKISimulationError, match="a lambda cannot be a kernel") as caught:
        simulate(lambda a: a, np.ones((4, 4), np.float32))
    assert caught.value.rule == "kernel.source" and caught.value.line > 0
