"""Rule ``capacity``: tensors fit HBM, SBUF and PSUM; interpret refuses what it cannot hold."""

from __future__ import annotations

import numpy as np
import pytest

import nkigym_graph as nkigym
from nkigym_graph.errors import ResourceLimitError, VerificationError
from nkigym_graph.numeric.memory_limit import DEFAULT_MAX_BYTES

COPY = """
def f(a):
    output = nkigym.ndarray(({rows}, {cols}), dtype=np.float32)
    tensor_0 = a[0:128, 0:128]
    output[0:128, 0:128] = tensor_0
    return output
"""


def _copy(rows: int, cols: int, a: tuple[int, int] = (128, 128), **kw: object) -> nkigym.Program:
    return nkigym.parse_program(COPY.format(rows=rows, cols=cols), {"a": a}, **kw)  # type: ignore[arg-type]


def test_an_output_beyond_hbm_is_refused_naming_the_statement_and_limit() -> None:
    with pytest.raises(VerificationError) as info:
        _copy(1_000_000, 1_000_000)
    assert info.value.rule == "capacity"
    assert info.value.statement == "output = nkigym.ndarray((1000000, 1000000), dtype=np.float32)"
    assert "4000000000000 bytes > 103079215104 bytes of HBM on trn2" in str(info.value)


def test_sizes_beyond_int64_are_refused_the_same_way() -> None:
    with pytest.raises(VerificationError, match=r"\[capacity\].*HBM on trn2"):
        _copy(10**20, 128)
    with pytest.raises(VerificationError, match=r"parameter 'a' \(128, 100000000000000000000\)"):
        _copy(128, 128, a=(128, 10**20))


def test_the_limit_is_the_target_s() -> None:
    rows = 2**25  # x 128 float32 = 16 GiB: fits trn1's 32 GiB, not grayskull's 8 GiB
    _copy(rows, 128, target="trn1")
    with pytest.raises(VerificationError, match="HBM on grayskull"):
        _copy(rows, 128, target="grayskull")


def test_parameters_and_outputs_together_must_fit() -> None:
    half = 60 * 2**30 // 4 // 128  # 60 GiB each: each fits trn2's 96 GiB, both do not
    with pytest.raises(VerificationError, match="parameters and outputs together need"):
        _copy(128, half, a=(128, half))


def test_an_on_chip_tile_beyond_sbuf_is_refused() -> None:
    text = """
def f(a):
    output = nkigym.ndarray((128, 64, 1024), dtype=np.float32)
    tensor_0 = a[0:128, 0:64, 0:1024]
    output[0:128, 0:64, 0:1024] = tensor_0
    return output
"""
    with pytest.raises(VerificationError) as info:
        nkigym.parse_program(text, {"a": (128, 64, 1024)})
    assert info.value.rule == "capacity" and info.value.statement == "tensor_0 = a[0:128, 0:64, 0:1024]"
    assert "262144 bytes per partition > 196608 bytes of SBUF on trn2" in str(info.value)


def test_interpret_refuses_beyond_its_byte_limit_before_allocating() -> None:
    program = _copy(100_000, 100_000)  # 40 GB float32: within HBM, not within 4 GiB
    with pytest.raises(ResourceLimitError, match=f"> the limit of {DEFAULT_MAX_BYTES} bytes"):
        nkigym.interpret(program, a=np.zeros((128, 128)))


def test_the_byte_limit_is_overridable() -> None:
    program = _copy(256, 256)
    a = np.ones((128, 128))
    with pytest.raises(ResourceLimitError, match="pass max_bytes= to raise it"):
        nkigym.interpret(program, max_bytes=1000, a=a)
    assert nkigym.interpret(program, max_bytes=None, a=a).sum() == 128 * 128
    with pytest.raises(nkigym.NkigymError, match="max_bytes must be"):
        nkigym.interpret(program, max_bytes=-1, a=a)


def test_emit_of_a_large_output_builds_no_mask_of_its_size() -> None:
    program = _copy(1_000_000, 20_000)  # 80 GB: within trn2's HBM
    kernel = nkigym.emit(program, backend="nki")
    assert "nl.ndarray((1000000, 20000)" in kernel and "nisa.memset" in kernel


def test_search_refuses_a_root_too_large_to_verify() -> None:
    program = _copy(128, 128, a=(65536, 65536))
    with pytest.raises(ResourceLimitError, match="verification needs"):
        nkigym.search(program, budget=2)


def test_interpret_holds_the_live_tiles_only() -> None:
    """A tile is dropped after its last use, so the limit is on the peak of the live
    tiles (with the inputs and outputs), not on the sum of every tile."""
    from nkigym_graph.ir.synthetic import tiled_matmul
    from nkigym_graph.numeric.interpreter import run
    from nkigym_graph.numeric.memory_limit import interpreter_bytes

    program = tiled_matmul(512, 512, 512)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((512, 512)), rng.standard_normal((512, 512))
    every_tile = interpreter_bytes(program, np.dtype(np.float64), False)
    live = interpreter_bytes(program, np.dtype(np.float64), False, keep=program.returns)
    inputs_and_output = 3 * 512 * 512 * 8 - 512 * 512 * 4  # the output is float32
    assert inputs_and_output < live < every_tile / 2
    got = nkigym.interpret(program, max_bytes=live, a=a, b=b)
    np.testing.assert_allclose(got, a.T @ b, rtol=1e-5, atol=1e-3)
    with pytest.raises(ResourceLimitError):
        nkigym.interpret(program, max_bytes=live - 1, a=a, b=b)
    env = run(program, {"a": a, "b": b}, keep=program.returns)
    assert set(env) == {"a", "b", *program.returns}
    assert set(run(program, {"a": a, "b": b})) == set(program.variables)
