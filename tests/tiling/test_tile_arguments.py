"""tile()'s arguments: each mistake is a named error that says which argument and why."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import nkigym_graph as nkigym
from nkigym_graph.errors import NkigymError, PluginError, TilingError
from nkigym_graph.ir.dtypes import DtypeError
from nkigym_graph.tiling.errors import StatementLimitError, TracingError


def relu(a):
    return nkigym.activation(a, op="relu")


def twice(a):
    return nkigym.tensor_tensor(a, a, op="add")


@pytest.mark.parametrize("target", [5, None, 1.5, b"trn2"])
def test_target_must_be_a_target_or_a_name(target: Any) -> None:
    with pytest.raises(PluginError, match=r"target must be a Target or a target name"):
        nkigym.tile(relu, {"a": (128, 128)}, target=target)


@pytest.mark.parametrize(
    ("shapes", "problem"),
    [
        ([1, 2], r"2 shapes given for 1 parameters \(a\)"),
        ([1], r"shapes: parameter 'a': shape 1 is not a tuple of integers"),
        ({"a": "128x128"}, r"shapes: parameter 'a': shape '128x128' is not a tuple of integers"),
        (None, r"shapes must map parameter names to shapes.*got NoneType None"),
        ("a", r"shapes must map parameter names to shapes.*got str"),
        (5, r"shapes must map parameter names to shapes.*got int 5"),
        ({"a": (128, -1)}, r"shapes: parameter 'a': shape \(128, -1\) must have positive sizes"),
        ({"a": (128, 0)}, r"shape \(128, 0\) must have positive sizes"),
        ({"a": (128, 128.0)}, r"shape \(128, 128.0\) is not a tuple of integers"),
        ({"a": (True, 128)}, r"shape \(True, 128\) is not a tuple of integers"),
        ({"a": (128, 128), "b": (128, 128)}, r"shapes given for unknown parameter\(s\) 'b'"),
        ({}, r"missing shape for parameter\(s\) 'a'"),
    ],
)
def test_bad_shapes_are_named(shapes: Any, problem: str) -> None:
    with pytest.raises(TilingError, match=problem):
        nkigym.tile(relu, shapes)


def test_numpy_integer_dimensions_are_accepted() -> None:
    program = nkigym.tile(relu, {"a": np.array([128, 256])})
    assert program.parameter("a").shape == (128, 256)


@pytest.mark.parametrize(
    ("dtype", "name"),
    [
        ("bf16", "bfloat16"),
        ("bfloat16", "bfloat16"),
        ("fp32", "float32"),
        ("float32", "float32"),
        ("fp16", "float16"),
        ("np.float16", "float16"),
        (np.float32, "float32"),
        (np.dtype("float16"), "float16"),
        (ml_dtypes.bfloat16, "bfloat16"),
        (np.float64, "float64"),
    ],
)
def test_dtype_aliases(dtype: Any, name: str) -> None:
    program = nkigym.tile(relu, {"a": (128, 128)}, dtype=dtype)
    assert [p.dtype for p in program.params] == [name]
    assert program.variables[program.returns[0]].dtype == name


@pytest.mark.parametrize("dtype", ["nope", "int4", 5, None, np.int32])
def test_unknown_dtype_lists_the_choices(dtype: Any) -> None:
    with pytest.raises(
        DtypeError, match=r"dtype: .* is not a supported dtype; choose one of float32, bfloat16"
    ):
        nkigym.tile(relu, {"a": (128, 128)}, dtype=dtype)


def test_statement_limit_refuses_before_building() -> None:
    with pytest.raises(
        StatementLimitError, match=r"would have [\d,]+ statements, over the limit of 1,000,000"
    ):
        nkigym.tile(relu, {"a": (1_000_000, 1_000_000)})


def test_statement_limit_is_exact_without_shared_reads() -> None:
    assert len(nkigym.tile(relu, {"a": (256, 512)}, max_statements=25)) == 25  # 1 + 8 x (load, relu, store)
    with pytest.raises(
        StatementLimitError, match=r"would have 25 statements, over the limit of 24;.*max_statements"
    ):
        nkigym.tile(relu, {"a": (256, 512)}, max_statements=24)


def test_statement_limit_with_a_tensor_read_twice() -> None:
    with pytest.raises(StatementLimitError, match=r"at least 1,\d{3},\d{3} statements"):
        nkigym.tile(twice, {"a": (100_000, 100_000)})
    assert len(nkigym.tile(twice, {"a": (256, 512)}, max_statements=25)) == 25  # one load per tile
    with pytest.raises(StatementLimitError, match=r"at least 25 statements, over the limit of 24"):
        nkigym.tile(twice, {"a": (256, 512)}, max_statements=24)


def test_statement_limit_stops_emission_between_the_bounds() -> None:
    def gram(a):
        return nkigym.nc_matmul(a, a)

    assert len(nkigym.tile(gram, {"a": (256, 256)})) == 25
    with pytest.raises(StatementLimitError, match=r"more than 20 statements"):
        nkigym.tile(gram, {"a": (256, 256)}, max_statements=20)


@pytest.mark.parametrize("limit", [0, -1, True, 1.5, "10"])
def test_statement_limit_must_be_a_positive_integer(limit: Any) -> None:
    with pytest.raises(TilingError, match=r"max_statements must be a positive integer"):
        nkigym.tile(relu, {"a": (128, 128)}, max_statements=limit)


def typo(a):
    return nkigym.activaton(a)  # type: ignore[attr-defined]


def raises(a):
    raise RuntimeError("user code failed")


def wrong_arity(a):
    return nkigym.nc_matmul(a)  # type: ignore[call-arg]


def recurses(a):
    return recurses(a)


@pytest.mark.parametrize(
    ("func", "problem"),
    [
        (typo, r"tracing 'typo' failed: AttributeError: .*has no attribute 'activaton'"),
        (raises, r"tracing 'raises' failed: RuntimeError: user code failed"),
        (wrong_arity, r"tracing 'wrong_arity' failed: TypeError: nc_matmul\(\) missing 1 required"),
        (recurses, r"tracing 'recurses' failed: RecursionError"),
    ],
)
def test_user_function_errors_name_the_function_and_line(func: Any, problem: str) -> None:
    with pytest.raises(TracingError, match=problem) as caught:
        nkigym.tile(func, {"a": (128, 128)})
    assert f"{__file__}:" in str(caught.value)  # the user's file and line
    assert (
        "nkigym." in str(caught.value) or "raise" in str(caught.value) or "recurses(a)" in str(caught.value)
    )
    assert len(str(caught.value)) < 400


def test_func_must_be_callable() -> None:
    with pytest.raises(NkigymError, match=r"func must be a function, got int"):
        nkigym.tile(5, {"a": (128, 128)})  # type: ignore[arg-type]


def test_a_long_chain_of_calls_tiles() -> None:
    def chain(a):
        for _ in range(1500):  # deeper than Python's default recursion limit allows emitting
            a = nkigym.activation(a, op="relu")
        return a

    program = nkigym.tile(chain, {"a": (128, 128)})
    assert len(program.statements_of("activation")) == 1500
