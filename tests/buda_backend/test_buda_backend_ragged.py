"""Rows that end inside a tile, and columns or rows spread over them: a row maximum or
minimum over any number of columns, softmax and attention over a ragged row, and divide,
maximum and minimum by a broadcast column or row. Every netlist passes the checker
(strict) and its evaluation equals numpy in float64 on the inputs as the queues hold
them, in each data format the backend emits.

The inputs sit far below (or above) zero, so a padding of zeros would be the maximum
(minimum) of every row, and ``exp(x - max)`` of that padding would overflow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from workload_functions import attention, softmax, softmax_reference

import nkigym_graph as ng
from nkigym_graph.buda.quantize import quantize
from nkigym_graph_plugins.buda_backend import BudaEmitError, netlist_inputs, run_netlist
from nkigym_graph_plugins.buda_backend.constants import largest_finite


@dataclass(frozen=True)
class Format:
    """How a program emits a data format, and the relative error its rounding allows."""

    df: str
    arch: str
    dtype: str
    option: str | None
    tolerance: float

    def emit(self, function: Any, shapes: dict[str, tuple[int, int]]) -> ng.Artifact:
        program = ng.tile(function, shapes, dtype=self.dtype, target=self.arch)
        artifact = ng.emit_artifact(program, backend="buda", df=self.option)
        assert ng.check_netlist(artifact.text, arch=self.arch, strict=True) == []
        params = [name for name, held in artifact.facts["host_queues"].items() if "param" in held]
        assert {artifact.parsed["queues"][name]["df"] for name in params} == {self.df}
        return artifact


FORMATS = [
    Format("Float32", "wormhole_b0", "float32", None, 1e-6),
    Format("Float16_b", "wormhole_b0", "bfloat16", None, 1.5e-2),
    Format("Float16", "wormhole_b0", "float16", None, 2e-3),
    Format("Bfp8_b", "wormhole_b0", "float32", "Bfp8_b", 2e-2),
    Format("Float16_b", "grayskull", "float32", None, 1.5e-2),
]
FORMAT_IDS = [f"{f.df}-{f.arch}" for f in FORMATS]


def held(array: np.ndarray, df: str) -> np.ndarray:
    """``array`` as a queue of ``df`` holds it (zero padding to whole tiles, cropped)."""
    rows, cols = array.shape
    padded = np.zeros((-(-rows // 32) * 32, -(-cols // 32) * 32))
    padded[:rows, :cols] = array
    return quantize(padded, df)[:rows, :cols]


def evaluate(
    fmt: Format, function: Any, arrays: dict[str, np.ndarray]
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The netlist's output on ``arrays`` and the arrays as its queues hold them."""
    artifact = fmt.emit(function, {name: a.shape for name, a in arrays.items()})
    inputs = {name: held(a, fmt.df) for name, a in arrays.items()}
    (out,) = run_netlist(artifact, inputs).values()
    return out, list(inputs.values())


def relative_error(out: np.ndarray, expected: np.ndarray) -> float:
    return float(np.abs(out - expected).max() / np.abs(expected).max())


def row_max(x: Any) -> Any:
    return ng.tensor_reduce(x, op="max")


def row_min(x: Any) -> Any:
    return ng.tensor_reduce(x, op="min")


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
@pytest.mark.parametrize("cols", [1000, 33, 65])
@pytest.mark.parametrize(
    ("function", "reference", "offset"), [(row_max, np.max, -60.0), (row_min, np.min, 60.0)]
)
def test_a_row_maximum_or_minimum_over_a_ragged_row_ignores_the_padding(
    fmt: Format, cols: int, function: Any, reference: Any, offset: float, rng: np.random.Generator
) -> None:
    """Every value is below (above) zero, the zero padding's value: the maximum (minimum)
    equals numpy's exactly. The backend refused these rows ("would include the tile
    padding")."""
    x = 3 * rng.standard_normal((40, cols)) + offset
    out, (held_x,) = evaluate(fmt, function, {"x": x})
    np.testing.assert_array_equal(out, reference(held_x, axis=1, keepdims=True))


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
@pytest.mark.parametrize("cols", [1000, 33, 65])
def test_softmax_over_a_ragged_row_equals_numpy(fmt: Format, cols: int, rng: np.random.Generator) -> None:
    """Rows near -60: a zero padding would be the maximum, and ``exp(x - max)`` of the
    padding (exp(60), inf in Float16) would make the row sum nan."""
    x = 3 * rng.standard_normal((100, cols)) - 60.0
    out, (held_x,) = evaluate(fmt, softmax, {"x": x})
    assert relative_error(out, softmax_reference(held_x)) < fmt.tolerance


@pytest.mark.parametrize(("dtype", "shift", "tolerance"), [("float32", -20.0, 1e-5), ("bfloat16", 0.0, 2e-2)])
@pytest.mark.parametrize("keys", [200, 33, 65])
def test_attention_with_a_ragged_key_length_equals_numpy(
    dtype: str, shift: float, tolerance: float, keys: int, rng: np.random.Generator
) -> None:
    fmt = next(f for f in FORMATS if f.dtype == dtype and f.arch == "wormhole_b0" and f.option is None)
    arrays = {
        "q_t": rng.standard_normal((64, 100)) + shift,  # scores far below zero
        "k_t": rng.standard_normal((64, keys)),
        "v": rng.standard_normal((keys, 64)),
    }
    out, (q_t, k_t, v) = evaluate(fmt, attention, arrays)
    assert relative_error(out, softmax_reference(q_t.T @ k_t / 8.0) @ v) < tolerance


def _spread_case(op: str, axis: str) -> Any:
    if axis == "column":
        return lambda x, y: ng.tensor_scalar(x, y, op=op)
    return lambda x, y: ng.tensor_tensor(x, y, op=op)


@pytest.mark.filterwarnings("ignore:invalid value encountered in multiply")  # see the docstring
@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
@pytest.mark.parametrize("op", ["divide", "maximum", "minimum"])
@pytest.mark.parametrize("axis", ["column", "row"])
@pytest.mark.parametrize("shape", [(40, 1000), (100, 33), (64, 64)])
def test_divide_maximum_and_minimum_by_a_broadcast_operand_equal_numpy(
    fmt: Format, op: str, axis: str, shape: tuple[int, int], rng: np.random.Generator
) -> None:
    """The backend refused these ("has no Buda form"): divide multiplies by the operand's
    reciprocal; maximum and minimum read the operand spread into a whole tensor. (The
    reciprocal of a column's zero padding rows is inf in Float16, which makes the padding
    rows of the result nan: padding only, cropped from the output.)"""
    rows, cols = shape
    other = (rows, 1) if axis == "column" else (1, cols)
    y = rng.standard_normal(other) * 3 - 1.0
    if op == "divide":
        y = np.sign(y) * (0.5 + np.abs(y))
    x = rng.standard_normal(shape) * 3 - 1.0
    out, (held_x, held_y) = evaluate(fmt, _spread_case(op, axis), {"x": x, "y": y})
    expected = {"divide": np.divide, "maximum": np.maximum, "minimum": np.minimum}[op](held_x, held_y)
    if op != "divide":  # exact, but for the rounding of the output a block format shares
        expected = held(expected, fmt.df) if fmt.df.startswith("Bfp") and cols % 32 == 0 else expected
        np.testing.assert_array_equal(out, expected)
    else:
        assert relative_error(out, expected) < fmt.tolerance


def test_divide_by_a_column_takes_the_reciprocal_of_the_column_only() -> None:
    """One reciprocal of the ``[R, 1]`` column (one tile column), spread by the multiply."""
    artifact = FORMATS[0].emit(_spread_case("divide", "column"), {"x": (64, 96), "y": (64, 1)})
    (ops,) = artifact.parsed["graphs"].values()
    (reciprocal,) = [op for op in ops.values() if op["type"] == "reciprocal"]
    assert reciprocal["grid_size"][1] * reciprocal["mblock"][1] * reciprocal["ublock"][1] == 1
    (multiply,) = [op for op in ops.values() if op["type"] == "multiply"]
    assert multiply["input_1_tms"] == [{"tile_broadcast": "c"}, {"broadcast": {"c": 3}}]


def test_an_overflowing_spread_in_the_padding_no_longer_makes_a_row_sum_nan(rng: np.random.Generator) -> None:
    """``exp(x + b)`` with ``b`` near 100 and ``x`` near -100 is moderate, but the bias
    column spread into the zero padding made it exp(100), inf in Float32, and the row sum
    (a matmul with ones, inf times 0) nan: the netlist masks the padding of a spread."""

    def shifted_exp_sum(x: Any, b: Any) -> Any:
        return ng.tensor_reduce(ng.activation(x, op="exp", bias=b), op="sum")

    x = rng.standard_normal((40, 70)) - 100.0
    b = rng.standard_normal((40, 1)) + 100.0
    out, (held_x, held_b) = evaluate(FORMATS[0], shifted_exp_sum, {"x": x, "b": b})
    assert relative_error(out, np.exp(held_x + held_b).sum(axis=1, keepdims=True)) < 1e-5


@pytest.mark.parametrize("df", ["Float32", "Float16_b", "Float16", "Bfp8_b"])
def test_the_host_writes_the_lowest_value_as_the_formats_most_negative_finite_one(df: str) -> None:
    option = {"Float16": None, "Float16_b": None}.get(df, df)
    dtype = {"Float16": "float16", "Float16_b": "bfloat16"}.get(df, "float32")
    artifact = Format(df, "wormhole_b0", dtype, option, 0.0).emit(row_max, {"x": (8, 40)})
    masks = {n: h for n, h in artifact.facts["host_queues"].items() if h.get("constant") == "padding_mask"}
    queues = netlist_inputs(artifact, {"x": np.zeros((8, 40))})
    lowest = [queues[n] for n, h in masks.items() if h["outside"] == -math.inf]
    assert len(masks) == 2 and len(lowest) == 1
    assert np.all(lowest[0][:, 40:] == -largest_finite(df)) and np.all(lowest[0][:, :40] == 0.0)
    assert np.array_equal(quantize(lowest[0], df), lowest[0])  # the queue holds it as written
    assert "saturated to the queue's format" in artifact.text


def test_a_maximum_over_padding_an_op_made_non_finite_is_refused_naming_it() -> None:
    """``log`` of the zero padding is -inf: the mask multiplies the padding by 0 (nan)."""

    def log_max(x: Any) -> Any:
        return ng.tensor_reduce(ng.activation(x, op="log"), op="max")

    program = ng.tile(log_max, {"x": (64, 40)}, target="wormhole_b0")
    refusal = r"tensor_reduce.*op=\"max\".*takes the maximum of 8 column\(s\) of .* \(shape \(64, 8\)\)"
    with pytest.raises(BudaEmitError, match=refusal) as raised:
        ng.emit_artifact(program, backend="buda")
    assert "mask the tile padding (multiplying it by 0), where an op made -inf" in str(raised.value)
