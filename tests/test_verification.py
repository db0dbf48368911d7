"""Each verification rule rejects a crafted bad program, naming the statement and rule."""

from __future__ import annotations

import pytest

from nkigym_graph import Operand, Param, Program, Statement, VerificationError, parse_program
from nkigym_graph.ir.ops import ACTIVATION, ALLOC, LOAD, NC_MATMUL, STORE
from nkigym_graph.ir.statement import make_attrs

T = ((0, 128), (0, 128))


def _program(statements: list[Statement], returns: str = "output", params=None) -> Program:
    params = params or [Param("a", (256, 256)), Param("b", (256, 1024))]
    return Program("bad", params, statements, returns)


ALLOC_OUT = Statement(ALLOC, (Operand("output", ((0, 128), (0, 128))),), make_attrs(dtype="float32"))
LOAD_A = Statement(LOAD, (Operand("a", T), Operand("t0", T)))
LOAD_B = Statement(LOAD, (Operand("b", T), Operand("t1", T)))


def _matmul(dst: str = "t2", rhs_slices=T, dst_slices=T) -> Statement:
    return Statement(NC_MATMUL, (Operand("t0", T), Operand("t1", rhs_slices), Operand(dst, dst_slices)))


def _store(src: str = "t2", slices=T) -> Statement:
    return Statement(STORE, (Operand(src, slices), Operand("output", T)))


def test_a_good_program_builds() -> None:
    program = _program([ALLOC_OUT, LOAD_A, LOAD_B, _matmul(), _store()])
    assert len(program) == 5


CASES = {
    "arity": [ALLOC_OUT, Statement(LOAD, (Operand("a", T),))],
    "attributes": [
        ALLOC_OUT,
        LOAD_A,
        Statement(ACTIVATION, (Operand("t0", T), Operand("t3", T)), make_attrs(op="frobnicate")),
    ],
    "unknown_variable": [ALLOC_OUT, LOAD_A, _matmul(), _store()],
    "read_before_write": [
        ALLOC_OUT,
        LOAD_A,
        LOAD_B,
        _matmul(),
        Statement(NC_MATMUL, (Operand("t0", T), Operand("t1", T), Operand("t2", T)), (), True),
        Statement(STORE, (Operand("t2", T), Operand("output", T))),
        Statement(LOAD, (Operand("a", ((0, 128), (128, 256))), Operand("t5", T))),
        Statement(NC_MATMUL, (Operand("t5", T), Operand("t6", T), Operand("t7", T))),
        Statement(LOAD, (Operand("b", T), Operand("t6", T))),
    ],
    "write_to_parameter": [ALLOC_OUT, LOAD_A, Statement(STORE, (Operand("t0", T), Operand("a", T)))],
    "redefinition": [ALLOC_OUT, ALLOC_OUT],
    "definition": [ALLOC_OUT, Statement(LOAD, (Operand("a", T), Operand("t0", ((128, 256), (0, 128)))))],
    "bounds": [ALLOC_OUT, Statement(LOAD, (Operand("a", ((0, 128), (200, 328))), Operand("t0", T)))],
    "slices": [
        ALLOC_OUT,
        Statement(LOAD, (Operand("a", ((0, 128), (64, 64))), Operand("t0", ((0, 128), (0, 0))))),
    ],
    "memory": [ALLOC_OUT, Statement(NC_MATMUL, (Operand("a", T), Operand("b", T), Operand("t2", T)))],
    "shape": [ALLOC_OUT, LOAD_A, LOAD_B, _matmul(dst_slices=((0, 128), (0, 64)))],
    "limit": [
        Statement(ALLOC, (Operand("output", ((0, 128), (0, 640))),), make_attrs(dtype="float32")),
        LOAD_A,
        Statement(LOAD, (Operand("b", ((0, 128), (0, 640))), Operand("t1", ((0, 128), (0, 640))))),
        Statement(
            NC_MATMUL,
            (Operand("t0", T), Operand("t1", ((0, 128), (0, 640))), Operand("t2", ((0, 128), (0, 640)))),
        ),
    ],
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_rejects_crafted_program(rule: str) -> None:
    with pytest.raises(VerificationError) as info:
        _program(CASES[rule])
    assert info.value.rule == rule
    assert f"[{rule}]" in str(info.value)


def test_error_names_the_statement_text() -> None:
    with pytest.raises(VerificationError) as info:
        _program(CASES["limit"])
    assert info.value.statement == "t2 = nkigym.nc_matmul(t0, t1)"
    assert "N is 640 > 512 on trn2" in str(info.value)


def test_return_of_unknown_variable_is_rejected() -> None:
    with pytest.raises(VerificationError, match=r"\[return\].*'nothing'"):
        _program([ALLOC_OUT, LOAD_A], returns="nothing")


def test_returning_an_on_chip_tile_is_rejected() -> None:
    """A program returns HBM tensors; an on-chip tile returned would reach the backends
    as an output (the NKI one then blamed its float64 dtype)."""
    with pytest.raises(VerificationError, match=r"\[return\] returns 't2', an on-chip tile.*store it"):
        _program([ALLOC_OUT, LOAD_A, LOAD_B, _matmul(), _store()], returns="t2")


def test_matmul_writing_a_region_of_the_wrong_shape_is_rejected() -> None:
    statements = [
        Statement(ALLOC, (Operand("output", ((0, 128), (0, 256))),), make_attrs(dtype="float32")),
        LOAD_A,
        Statement(LOAD, (Operand("b", ((0, 128), (0, 256))), Operand("t1", ((0, 128), (0, 256))))),
        Statement(
            NC_MATMUL,
            (Operand("t0", T), Operand("t1", ((0, 128), (128, 256))), Operand("t2", ((0, 128), (0, 256)))),
        ),
    ]
    with pytest.raises(VerificationError) as info:
        _program(statements)
    assert info.value.rule == "shape"


def test_reading_a_partly_written_output_is_read_before_write() -> None:
    text = """
    def f(a):
        output = nkigym.ndarray((128, 256), dtype=np.float32)
        tensor_0 = a[0:128, 0:128]
        tensor_1 = nkigym.activation(tensor_0, op="exp")
        tensor_1[0:128, 0:64] = nkigym.activation(tensor_0[0:128, 0:64], op="exp")
        output[0:128, 0:128] = tensor_1
        return output
    """
    assert len(parse_program(text)) == 5
    broken = text.replace(
        'tensor_1 = nkigym.activation(tensor_0, op="exp")', 'tensor_2 = nkigym.activation(tensor_0, op="exp")'
    )
    with pytest.raises(Exception, match="not defined"):
        parse_program(broken)
