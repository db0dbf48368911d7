"""``parse_program(text, dtype={...})`` refuses a name that is not a parameter, naming it
and the parameters; the parameters a partial mapping leaves out are float32."""

from __future__ import annotations

import pytest

import nkigym_graph as ng
from nkigym_graph.ir.synthetic import tiled_matmul

TEXT = str(tiled_matmul(128, 128, 256))  # parameters a, b


@pytest.mark.parametrize(
    ("dtypes", "message"),
    [
        ({"z": "bf16"}, r"dtype: 'z' is not a parameter \(parameters: a, b\)"),
        ({"a": "bf16", "z": "bf16", "w": "fp16"}, r"dtype: 'z', 'w' are not parameters \(parameters: a, b\)"),
        ({1: "bf16"}, r"dtype: 1 is not a parameter"),
    ],
)
def test_a_name_that_is_not_a_parameter_is_refused(dtypes: dict[object, str], message: str) -> None:
    with pytest.raises(ng.DtypeError, match=message):
        ng.parse_program(TEXT, dtype=dtypes)


def test_a_partial_mapping_leaves_the_others_float32() -> None:
    program = ng.parse_program(TEXT, dtype={"b": "bf16"})
    assert [(p.name, p.dtype) for p in program.params] == [("a", "float32"), ("b", "bfloat16")]


def test_a_fragment_may_name_its_implicit_inputs_and_outputs() -> None:
    fragment = ng.parse_fragment(
        "t = a[0:128, 0:128]\nout[0:128, 0:128] = t", dtype={"a": "bf16", "out": "bf16"}
    )
    assert [p.dtype for p in (*fragment.params, *fragment.outputs)] == ["bfloat16", "bfloat16"]
    with pytest.raises(ng.DtypeError, match=r"'c' is not a parameter \(parameters: a, out\)"):
        ng.parse_fragment("t = a[0:128, 0:128]\nout[0:128, 0:128] = t", dtype={"c": "bf16"})
