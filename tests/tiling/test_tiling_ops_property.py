"""Property tests: every broadcasting op, activation form and reduction, tiled at random
(ragged) shapes on Trainium and Tenstorrent tile sizes, interprets to what numpy computes."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import nkigym_graph as nkigym

TOL = 1e-9
rows = st.integers(1, 300)
cols = st.integers(1, 700)
targets = st.sampled_from(["trn2", "wormhole_b0"])
binary = st.sampled_from(["add", "subtract", "multiply", "divide", "maximum", "minimum"])
reductions = st.sampled_from(["sum", "max", "min", "mean"])
NUMPY_BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
}
NUMPY_REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "mean": np.mean}
NUMPY_UNARY = {
    "gelu": lambda y: 0.5 * y * (1 + np.tanh(math.sqrt(2 / math.pi) * (y + 0.044715 * y**3))),
    "silu": lambda y: y / (1 + np.exp(-y)),
    "rsqrt": lambda y: 1 / np.sqrt(y),
    "reciprocal": lambda y: 1 / y,
    "square": np.square,
    "exp": np.exp,
    "tanh": np.tanh,
}


def _run(func, shapes, target: str, seed: int, **options) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    arrays = {name: rng.uniform(0.5, 2.0, shape) for name, shape in shapes.items()}
    program = nkigym.tile(func, shapes, dtype="float64", target=target, **options)
    return nkigym.interpret(program, **arrays), arrays


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    r=rows, c=cols, op=binary, form=st.sampled_from(["column", "row"]), target=targets, seed=st.integers(0, 9)
)
def test_broadcast_tensor_tensor(r: int, c: int, op: str, form: str, target: str, seed: int) -> None:
    def f(x, y):
        return nkigym.tensor_tensor(x, y, op=op)

    other = (r, 1) if form == "column" else (1, c)
    got, a = _run(f, {"x": (r, c), "y": other}, target, seed)
    np.testing.assert_allclose(got, NUMPY_BINARY[op](a["x"], a["y"]), rtol=TOL)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    r=rows, c=cols, op=binary, form=st.sampled_from(["column", "row"]), target=targets, seed=st.integers(0, 9)
)
def test_tensor_scalar_with_a_tensor(r: int, c: int, op: str, form: str, target: str, seed: int) -> None:
    def f(x, y):
        return nkigym.tensor_scalar(nkigym.activation(x, op="copy"), y, op=op)

    other = (r, 1) if form == "column" else (1, c)
    got, a = _run(f, {"x": (r, c), "y": other}, target, seed)
    np.testing.assert_allclose(got, NUMPY_BINARY[op](a["x"], a["y"]), rtol=TOL)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    r=rows,
    c=cols,
    fn=st.sampled_from(sorted(NUMPY_UNARY)),
    scale=st.sampled_from([1.0, 0.5, 2.0]),
    bias=st.sampled_from([0.0, 0.25, "column"]),
    target=targets,
    seed=st.integers(0, 9),
)
def test_activation_with_scale_and_bias(
    r: int, c: int, fn: str, scale: float, bias, target: str, seed: int
) -> None:
    if bias == "column":

        def f(x, b):
            return nkigym.activation(x, op=fn, scale=scale, bias=b)

        got, a = _run(f, {"x": (r, c), "b": (r, 1)}, target, seed)
        shift = a["b"]
    else:

        def g(x):
            return nkigym.activation(x, op=fn, scale=scale, bias=bias)

        got, a = _run(g, {"x": (r, c)}, target, seed)
        shift = bias
    np.testing.assert_allclose(got, NUMPY_UNARY[fn](a["x"] * scale + shift), rtol=1e-8)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(r=rows, c=cols, kind=reductions, target=targets, seed=st.integers(0, 9))
def test_reductions_across_tiles(r: int, c: int, kind: str, target: str, seed: int) -> None:
    def f(x):
        return nkigym.tensor_reduce(x, op=kind)

    got, a = _run(f, {"x": (r, c)}, target, seed)
    np.testing.assert_allclose(got, NUMPY_REDUCE[kind](a["x"], axis=1, keepdims=True), rtol=TOL)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(r=st.integers(1, 260), c=st.integers(1, 260), kind=reductions, seed=st.integers(0, 9))
def test_partition_reduction_through_a_transpose(r: int, c: int, kind: str, seed: int) -> None:
    def f(x):
        return nkigym.tensor_reduce(nkigym.nc_transpose(x), op=kind)

    got, a = _run(f, {"x": (r, c)}, "trn2", seed)
    np.testing.assert_allclose(got, NUMPY_REDUCE[kind](a["x"], axis=0)[:, None], rtol=TOL)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(r=rows, c=cols, kind=reductions, target=targets, seed=st.integers(0, 9))
def test_epilogue_reads_the_reduction(r: int, c: int, kind: str, target: str, seed: int) -> None:
    """``x / reduce(x)`` and ``x - reduce(x)``: every output tile reads the whole row's result."""

    def f(x):
        total = nkigym.tensor_reduce(x, op=kind)
        return nkigym.tensor_tensor(nkigym.tensor_tensor(x, total, op="divide"), total, op="subtract")

    got, a = _run(f, {"x": (r, c)}, target, seed)
    total = NUMPY_REDUCE[kind](a["x"], axis=1, keepdims=True)
    np.testing.assert_allclose(got, a["x"] / total - total, rtol=TOL, atol=TOL)


def softmax(x):
    m = nkigym.tensor_reduce(x, op="max")
    e = nkigym.activation(x, op="exp", scale=0.7, bias=nkigym.tensor_scalar(m, -0.7, op="multiply"))
    return nkigym.tensor_scalar(e, nkigym.activation(nkigym.tensor_reduce(e, op="sum"), op="reciprocal"))


def softmax_reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(0.7 * (x - x.max(axis=1, keepdims=True)))
    return e / e.sum(axis=1, keepdims=True)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(r=rows, c=cols, online=st.booleans(), target=targets, seed=st.integers(0, 9))
def test_softmax_two_pass_and_online(r: int, c: int, online: bool, target: str, seed: int) -> None:
    got, a = _run(softmax, {"x": (r, c)}, target, seed, online=online)
    np.testing.assert_allclose(got, softmax_reference(a["x"]), rtol=1e-9, atol=1e-12)


def attention(q_t, k_t, v):
    scores = nkigym.nc_matmul(q_t, k_t)
    shift = nkigym.tensor_scalar(nkigym.tensor_reduce(scores, op="max"), -0.5, op="multiply")
    weights = nkigym.activation(scores, op="exp", scale=0.5, bias=shift)
    total = nkigym.activation(nkigym.tensor_reduce(weights, op="sum"), op="reciprocal")
    return nkigym.tensor_scalar(nkigym.nc_matmul(nkigym.nc_transpose(weights), v), total)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    d=st.integers(1, 128),
    sq=st.integers(1, 300),
    sk=st.integers(1, 700),
    dv=st.integers(1, 200),
    online=st.booleans(),
    seed=st.integers(0, 9),
)
def test_attention_two_pass_and_online(d: int, sq: int, sk: int, dv: int, online: bool, seed: int) -> None:
    shapes = {"q_t": (d, sq), "k_t": (d, sk), "v": (sk, dv)}
    got, a = _run(attention, shapes, "trn2", seed, online=online)
    s = a["q_t"].T @ a["k_t"] * 0.5
    e = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, (e / e.sum(axis=1, keepdims=True)) @ a["v"], rtol=1e-9, atol=1e-12)
