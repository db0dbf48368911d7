"""Verification refuses a program returning an output no statement writes (only its
``nkigym.ndarray`` allocation), whether built in full or derived by a rewrite; an
output written in part stays valid (the rest is zeros)."""

from __future__ import annotations

import numpy as np
import pytest

import nkigym_graph as ng
from nkigym_graph.ir.derivation import derive_program

STORED = """
def f(a):
    output = nkigym.ndarray((128, 256), dtype=np.float32)
    tensor_0 = a[0:128, 0:128]
    output[0:128, 0:128] = tensor_0
    return output
"""

NEVER_STORED = """
def f(a):
    output = nkigym.ndarray((128, 256), dtype=np.float32)
    return output
"""


def test_an_output_only_allocated_is_refused() -> None:
    with pytest.raises(ng.VerificationError, match=r"\[return\] returns 'output', which no statement writes"):
        ng.parse_program(NEVER_STORED, {"a": (128, 128)})


def test_an_output_written_in_part_is_valid() -> None:
    program = ng.parse_program(STORED)
    a = np.arange(128 * 128, dtype=np.float32).reshape(128, 128)
    out = ng.interpret(program, a=a)
    np.testing.assert_array_equal(out[:, :128], a)
    np.testing.assert_array_equal(out[:, 128:], 0)


def test_a_rewrite_removing_the_only_store_is_refused() -> None:
    program = ng.parse_program(STORED)
    (store,) = program.statements_of("store")
    with pytest.raises(ng.VerificationError, match="no statement writes"):
        derive_program(program, {}, frozenset({store}))
