"""``Program(...)`` refuses wrong-typed arguments with a VerificationError (rule
``argument``) naming the argument, before verification."""

from __future__ import annotations

from typing import Any

import pytest

import nkigym_graph as ng
from nkigym_graph.ir.synthetic import tiled_matmul

ROOT = tiled_matmul(128, 128, 256)
LOAD = ROOT.statements[1]


def _with(index: int, stmt: Any) -> list[Any]:
    statements = list(ROOT.statements)
    statements[index] = stmt
    return statements


def _operand(var: Any = None, slices: Any = None) -> Any:
    first = LOAD.operands[0]
    return LOAD._replace(operands=(ng.Operand(var or first.var, slices or first.slices), *LOAD.operands[1:]))


STATEMENT = r"statements\[1\] must be a Statement"
CASES = [
    ({"name": None}, "name must be a str, got NoneType None"),
    ({"params": 5}, "params must be an iterable of Param .* got int 5"),
    ({"params": [None]}, "params must be .* got an item NoneType None"),
    ({"params": [("a", "x")]}, r"params: the shape of 'a' must be a tuple of sizes, got str 'x'"),
    ({"params": [("a", ("x", 128))]}, r"params: the shape of 'a' must be an integer >= 1, got str 'x'"),
    ({"params": [("a", (128, 128), "nope")]}, r"params: the dtype of 'a': 'nope' is not a supported dtype"),
    ({"outputs": "x"}, "outputs must be an iterable of Param .* got str 'x'"),
    ({"statements": None}, "statements must be an iterable of Statement, got NoneType None"),
    ({"statements": _with(1, None)}, STATEMENT),
    ({"statements": _with(1, LOAD._replace(op=None))}, STATEMENT),
    ({"statements": _with(1, LOAD._replace(attrs=5))}, STATEMENT),
    ({"statements": _with(1, LOAD._replace(attrs=(("op", [1]),)))}, STATEMENT),
    ({"statements": _with(1, LOAD._replace(accumulate=None))}, STATEMENT),
    ({"statements": _with(1, _operand(var=[1]))}, STATEMENT),
    ({"statements": _with(1, _operand(slices=5))}, STATEMENT),
    ({"statements": _with(1, _operand(slices=((0, 128), "x")))}, STATEMENT),
    ({"returns": 5}, "returns must be a name or names, got int 5"),
    ({"returns": [5]}, r"returns must be a name or names \(str\), got int 5"),
    ({"fragment": None}, "fragment must be True or False"),
    ({"target": 5}, "target must be a target name or a Target"),
]


@pytest.mark.parametrize(("changes", "message"), CASES)
def test_a_wrong_argument_is_named(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ng.NkigymError, match=message):
        ROOT.replace(**changes)


def test_replace_names_an_unknown_field() -> None:
    with pytest.raises(ng.VerificationError, match=r"replace: Program has no field\(s\) \['nope'\]"):
        ROOT.replace(nope=1)


def test_params_as_tuples_and_dtype_aliases_still_work() -> None:
    params = [(p.name, list(p.shape), "fp32") for p in ROOT.params]
    assert ROOT.replace(params=params) == ROOT
