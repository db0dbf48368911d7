"""The interpreter against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import tiled_programs
from support import seed_text

import nkigym_graph as nkigym
from nkigym_graph import NkigymError, interpret, parse_fragment, parse_program
from nkigym_graph.ir.synthetic import tiled_matmul


def test_seed_002_example_equals_numpy(rng: np.random.Generator) -> None:
    program = parse_program(seed_text("002_program"))
    a, b = rng.standard_normal((128, 128)), rng.standard_normal((128, 256))
    out = interpret(program, a=a, b=b)
    assert out.dtype == np.float64  # the program allocates float64
    expected = np.zeros((256, 256))
    expected[0:128, 0:256] = a.T @ b
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("m", "k", "n"), [(128, 128, 128), (256, 384, 512), (200, 1000, 130)])
def test_tiled_matmul_equals_numpy(m: int, k: int, n: int, rng: np.random.Generator) -> None:
    program = tiled_matmul(m, k, n, dtype="float64")
    a, b = rng.standard_normal((k, m)), rng.standard_normal((k, n))
    np.testing.assert_allclose(interpret(program, a=a, b=b), a.T @ b, rtol=1e-10, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(tiled_programs())
def test_random_tiled_programs_equal_numpy(program) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(program.parameter("a").shape)
    b = rng.standard_normal(program.parameter("b").shape)
    expected = a.T @ b
    tails = {s.attr("op") for s in (program[i] for i in program.statements_of("activation"))}
    if tails:
        (tail,) = tails
        expected = {"tanh": np.tanh, "exp": np.exp, "relu": lambda x: np.maximum(x, 0)}[tail](expected)
    np.testing.assert_allclose(interpret(program, a=a, b=b), expected, rtol=1e-9, atol=1e-9)


def test_float32_outputs_and_dtype_override(rng: np.random.Generator) -> None:
    program = parse_program(seed_text("001_program_before"))
    a, b = rng.standard_normal((128, 128)), rng.standard_normal((128, 256))
    assert interpret(program, a=a, b=b).dtype == np.float32
    assert interpret(program, dtype=np.float64, a=a, b=b).dtype == np.float64


def test_fragments_return_what_they_write(rng: np.random.Generator) -> None:
    fragment = parse_fragment(seed_text("000_stores_free_before"))
    tile = rng.standard_normal((128, 256))
    out = interpret(fragment, tensor_2=tile)
    np.testing.assert_array_equal(out["output"], tile.astype(np.float32))


def test_bad_inputs_are_named(rng: np.random.Generator) -> None:
    program = parse_program(seed_text("001_program_before"))
    with pytest.raises(NkigymError, match="missing input 'b'"):
        interpret(program, a=np.zeros((128, 128)))
    with pytest.raises(NkigymError, match=r"input 'b' has shape \(3, 3\)"):
        interpret(program, a=np.zeros((128, 128)), b=np.zeros((3, 3)))
    with pytest.raises(NkigymError, match="unexpected input"):
        interpret(program, a=np.zeros((128, 128)), b=np.zeros((128, 256)), c=1)


def test_run_rounding_every_written_result_as_kernel_tiles_do() -> None:
    """``run(..., round_to=)``: each statement's result is rounded to that dtype (what the
    search's kernel confirmation compares a narrow kernel with)."""
    import ml_dtypes

    from nkigym_graph.numeric.interpreter import run

    def f(a, b):  # type: ignore[no-untyped-def]
        return nkigym.activation(nkigym.activation(nkigym.nc_matmul(a, b), op="relu"), op="exp")

    program = nkigym.tile(f, {"a": (128, 128), "b": (128, 64)})
    rng = np.random.default_rng(0)
    a, b = rng.random((128, 128)), rng.random((128, 64)) / 16
    bf16 = np.dtype(ml_dtypes.bfloat16)

    def rounded(x):  # type: ignore[no-untyped-def]
        return x.astype(bf16).astype(np.float64)

    expected = rounded(np.exp(rounded(np.maximum(rounded(rounded(a).T @ rounded(b)), 0))))
    got = run(program, {"a": rounded(a), "b": rounded(b)}, round_to=bf16)[program.returns[0]]
    assert np.array_equal(np.asarray(got, dtype=np.float64), expected)
