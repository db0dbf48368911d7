"""Numeric semantics of single instructions, views and the old-style value helpers."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from nkigym_graph.nki_sim import simulate

HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"


def _kernel(params: str, body: str) -> str:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"{HEADER}@nki.jit\ndef kernel({params}):\n{lines}\n"


def _rand(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


LOAD_X = """
t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
r = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
"""


def test_tensor_scalar_vector_operand_reverse_and_second_op() -> None:
    body = (
        LOAD_X
        + """
v = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
nisa.dma_copy(dst=v, src=col)
nisa.tensor_scalar(dst=r, data=t, op0=nl.subtract, operand0=v, reverse0=True,
                   op1=nl.multiply, operand1=3.0)
nisa.dma_copy(dst=out, src=r)
return out
"""
    )
    x, col = _rand((64, 10)), _rand((64, 1), 1)
    out = simulate(_kernel("x, col", body), x, col)
    np.testing.assert_allclose(out, (col - x) * 3.0, rtol=1e-6)


def test_scalar_tensor_tensor() -> None:
    body = (
        LOAD_X
        + """
u = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=u, src=y)
nisa.scalar_tensor_tensor(dst=r, data=t, op0=nl.multiply, operand0=2.0, op1=nl.subtract,
                          operand1=u, reverse1=True)
nisa.dma_copy(dst=out, src=r)
return out
"""
    )
    x, y = _rand((32, 16)), _rand((32, 16), 1)
    np.testing.assert_allclose(simulate(_kernel("x, y", body), x, y), y - 2.0 * x, rtol=1e-6)


@pytest.mark.parametrize(
    ("op", "reduce"), [("add", np.sum), ("maximum", np.max), ("minimum", np.min), ("multiply", np.prod)]
)
def test_tensor_reduce_over_trailing_axes_with_negate(op: str, reduce) -> None:
    body = f"""
t = nl.ndarray((16, 3, 4), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
r = nl.ndarray((16, 1), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_reduce(dst=r, op=nl.{op}, data=t, axis=[1, 2], negate=True)
out = nl.ndarray((16, 1), dtype=nl.float32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=r)
return out
"""
    x = _rand((16, 3, 4))
    out = simulate(_kernel("x", body), x)
    np.testing.assert_allclose(out[:, 0], -reduce(x, axis=(1, 2)), rtol=1e-5)


def test_tensor_tensor_scan_recurrence() -> None:
    body = (
        LOAD_X
        + """
u = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=u, src=y)
nisa.tensor_tensor_scan(dst=r, data0=t, data1=u, initial=0.5, op0=nl.multiply, op1=nl.add)
nisa.dma_copy(dst=out, src=r)
return out
"""
    )
    x, y = _rand((8, 20)), _rand((8, 20), 1)
    expected = np.empty_like(x)
    prev = np.full(8, 0.5, np.float32)
    for i in range(20):
        prev = prev * x[:, i] + y[:, i]
        expected[:, i] = prev
    np.testing.assert_allclose(simulate(_kernel("x, y", body), x, y), expected, rtol=1e-5)


def test_activation_accumulates_in_scalar_engine_registers() -> None:
    body = (
        LOAD_X
        + """
s = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
nisa.activation(dst=r, op=nl.exp, data=t, reduce_cmd=nisa.reduce_cmd.reset)
nisa.activation(dst=r, op=nl.exp, data=t, reduce_op=nl.add, reduce_cmd=nisa.reduce_cmd.reduce)
nisa.activation(dst=r, op=nl.square, data=t, reduce_op=nl.add, reduce_res=s,
                reduce_cmd=nisa.reduce_cmd.reduce)
result = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=result, src=s)
return result
"""
    )
    x = _rand((32, 12))
    out = simulate(_kernel("x", body), x)
    expected = np.exp(x).sum(axis=1) + np.square(x).sum(axis=1)
    np.testing.assert_allclose(out[:, 0], expected, rtol=1e-5)


def test_integer_add_is_exact_and_bitvec_ops_work() -> None:
    body = """
t = nl.ndarray(x.shape, dtype=nl.int32, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
r = nl.ndarray(x.shape, dtype=nl.int32, buffer=nl.sbuf)
nisa.tensor_tensor(dst=r, data1=t, data2=t, op=nl.add)
nisa.tensor_scalar(dst=r, data=r, op0=nl.bitwise_and, operand0=0x7FFFFFF0,
                   op1=nl.right_shift, operand1=4)
out = nl.ndarray(x.shape, dtype=nl.int32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=r)
return out
"""
    x = np.random.default_rng(4).integers(2**24, 2**29, size=(8, 8), dtype=np.int32)
    out = simulate(_kernel("x", body), x)
    np.testing.assert_array_equal(out, ((x + x) & 0x7FFFFFF0) >> 4)


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3", "float16"])
def test_casts_round_like_ml_dtypes(dtype: str) -> None:
    body = f"""
t = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
c = nl.ndarray(x.shape, dtype=nl.{dtype}, buffer=nl.sbuf)
nisa.tensor_copy(dst=c, src=t)
out = nl.ndarray(x.shape, dtype=nl.{dtype}, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=c)
return out
"""
    x = _rand((16, 16)) * 4
    storage = np.dtype(getattr(ml_dtypes, dtype, None) or dtype)
    out = simulate(_kernel("x", body), x)
    assert out.dtype == storage
    np.testing.assert_array_equal(out.view(np.uint8), x.astype(storage).view(np.uint8))


def test_vector_engine_transpose_within_sbuf() -> None:
    body = """
t = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
u = nl.ndarray((16, 32), dtype=x.dtype, buffer=nl.sbuf)
nisa.nc_transpose(dst=u, data=t)
out = nl.ndarray((16, 32), dtype=x.dtype, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=u)
return out
"""
    x = _rand((32, 16))
    np.testing.assert_array_equal(simulate(_kernel("x", body), x), x.T)


def test_matmul_is_transpose_keeps_the_input_dtype() -> None:
    body = """
t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
eye = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=eye, src=identity)
flipped = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.psum)
nisa.nc_matmul(dst=flipped, stationary=t, moving=eye, is_transpose=True)
out = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.shared_hbm)
copy = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.sbuf)
nisa.tensor_copy(dst=copy, src=flipped)
nisa.dma_copy(dst=out, src=copy)
return out
"""
    bf16 = np.dtype(ml_dtypes.bfloat16)
    x = _rand((128, 64)).astype(bf16)
    out = simulate(_kernel("x, identity", body), x, np.eye(128, dtype=bf16))
    assert out.dtype == bf16
    np.testing.assert_array_equal(out, x.T)


def test_views_write_through_and_reinterpret_bits() -> None:
    body = """
t = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.sbuf)
nisa.dma_copy(dst=t.reshape((4, 2, 4)), src=x.reshape((4, 2, 4)))
bits = nl.ndarray((4, 8), dtype=nl.int32, buffer=nl.sbuf)
nisa.tensor_copy(dst=bits, src=t.view(nl.int32))
out = nl.ndarray((4, 8), dtype=nl.int32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=bits)
tail = nl.ndarray((4, 3), dtype=nl.float32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=tail, src=x.ap([[8, 4], [2, 3]], offset=1))
return out, tail
"""
    x = _rand((4, 8))
    bits, tail = simulate(_kernel("x", body), x)
    np.testing.assert_array_equal(bits, x.view(np.int32))
    np.testing.assert_array_equal(tail, x[:, 1:7:2])


def test_dma_read_modify_write_add() -> None:
    body = """
t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=x)
nisa.dma_copy(dst=t, src=x, dst_rmw_op=nl.add)
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=t)
return out
"""
    x = _rand((8, 8))
    np.testing.assert_array_equal(simulate(_kernel("x", body), x), x + x)


OLD_STYLE = (
    HEADER
    + """
@nki.jit
def old_style(lhsT, rhs, x):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        a = nl.ndarray((128, M), dtype=lhsT.dtype, buffer=nl.sbuf)
        a[...] = nl.load(lhsT[k * 128:(k + 1) * 128, :])
        b = nl.load(rhs[k * 128:(k + 1) * 128, :])
        acc += nl.matmul(a, b, transpose_x=True)
    nl.store(result, value=nl.copy(acc, dtype=result.dtype))

    stats = nl.ndarray((x.shape[0], 3), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    both = nl.ndarray((x.shape[0], 3), dtype=nl.float32, buffer=nl.sbuf)
    both[:, 0:1] = nl.sum(nl.exp(t), axis=1, keepdims=True)
    both[:, 1:2] = nl.max(t * 2.0 + 1.0, axis=1, keepdims=True)
    both[:, 2:3] = nl.mean(nl.maximum(t, 0.0), axis=1, keepdims=True)
    nl.store(stats, both)

    flipped = nl.ndarray((x.shape[1], x.shape[0]), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(flipped, nl.copy(nl.transpose(t)))
    plain = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(plain, nl.copy(nl.matmul(nl.copy(nl.transpose(nl.load(lhsT[0:128, :]))),
                                      nl.load(rhs[0:128, :]))))
    return result, stats, flipped, plain
"""
)


def test_old_style_value_helpers() -> None:
    lhsT, rhs, x = _rand((256, 64)), _rand((256, 128), 1), _rand((32, 24), 2)
    result, stats, flipped, plain = simulate(OLD_STYLE, lhsT, rhs, x)
    np.testing.assert_allclose(result, lhsT.T @ rhs, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(stats[:, 0], np.exp(x).sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(stats[:, 1], (x * 2 + 1).max(axis=1), rtol=1e-6)
    np.testing.assert_allclose(stats[:, 2], np.maximum(x, 0).mean(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(flipped, x.T)
    np.testing.assert_allclose(plain, lhsT[:128].T @ rhs[:128], rtol=1e-4, atol=1e-4)


PROMOTION = _kernel(
    "x",
    """
i = nl.ndarray((x.shape[0], 8), dtype=nl.int32, buffer=nl.sbuf)
nisa.iota(i, [[1, 8]], offset=0)
h = nl.full((x.shape[0], 8), 0.25, dtype=nl.float16)
b = nl.full((x.shape[0], 8), 0.5, dtype=nl.bfloat16)
u = nl.full((x.shape[0], 8), 3, dtype=nl.uint8)
s = nl.full((x.shape[0], 8), -1, dtype=nl.int8)
cases = [nl.add(i, h), i * 0.5, nl.add(h, b), h * 1.5, nl.add(u, s), nl.add(i, b, dtype=nl.int32)]
outs = []
for value in cases:
    out = nl.ndarray(value.shape, dtype=value.dtype, buffer=nl.shared_hbm)
    nl.store(out, value)
    outs.append(out)
return tuple(outs)
""",
)


def test_value_helpers_promote_dtypes_as_nki_documents() -> None:
    """NKI's type promotion: (float, int) is the float, fp16 with bf16 is fp32, a Python
    float is fp32, int8 with uint8 is int16. ``int32 + float16`` was int32 (0.25 lost)
    and ``int32 * 0.5`` truncated to integers."""
    int_f16, int_half, f16_bf16, f16_scalar, u8_i8, explicit = simulate(PROMOTION, _rand((4, 8)))
    column = np.arange(8)
    assert int_f16.dtype == np.float16 and np.array_equal(int_f16[0], column + 0.25)
    assert int_half.dtype == np.float32 and np.array_equal(int_half[0], column * 0.5)
    assert f16_bf16.dtype == np.float32 and np.all(f16_bf16 == 0.75)
    assert f16_scalar.dtype == np.float32 and np.all(f16_scalar == 0.375)
    assert u8_i8.dtype == np.int16 and np.all(u8_i8 == 2)
    assert explicit.dtype == np.int32 and np.array_equal(explicit[0], column)  # dtype= wins
