"""The emitted text: the current NKI dialect, one commented group per program statement,
stable names, and the lowering of each op with NKI's own keywords."""

from __future__ import annotations

import numpy as np
import pytest
from nki_backend.nki_cases import CASES, inputs, run, tiled

import nkigym_graph as ng
from nkigym_graph.ir.ops import ALLOC, LOAD, STORE
from nkigym_graph.ir.statement import Operand, Statement, make_attrs
from nkigym_graph.ir.synthetic import tiled_matmul

CASE = {c.id: c for c in CASES}


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


def test_kernel_skeleton() -> None:
    text = ng.emit(tiled_matmul(256, 128, 256), backend="nki")
    lines = _lines(text)
    assert lines[:3] == ["import nki", "import nki.isa as nisa", "import nki.language as nl"]
    assert lines.count("@nki.jit") == 1
    assert "def tiled_matmul(a, b):" in lines
    assert "output = nl.ndarray((256, 256), dtype=nl.float32, buffer=nl.shared_hbm)" in lines
    assert lines[-1] == "return output"


@pytest.mark.parametrize("case_id", ["matmul_200x256x384", "double_matmul", "scaled_transpose", "row_max"])
def test_every_statement_is_named_by_a_comment(case_id: str) -> None:
    program = tiled(CASE[case_id], saturate=True)
    lines = _lines(ng.emit(program, backend="nki", roll_loops=False))
    for node in program.ids:
        assert f"# {program.describe(node)}" in lines


def test_emission_is_deterministic() -> None:
    program = tiled(CASE["double_matmul"], saturate=True)
    assert ng.emit(program, backend="nki") == ng.emit(program, backend="nki")


def test_k_steps_accumulate_into_one_psum_tile_and_are_evicted_before_the_store() -> None:
    lines = _lines(ng.emit(tiled_matmul(128, 384, 128), backend="nki", roll_loops=False))
    psum = [line for line in lines if "buffer=nl.psum" in line]
    assert psum == ["tensor_2 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)"]
    matmuls = [line for line in lines if line.startswith("nisa.nc_matmul(")]
    assert len(matmuls) == 3 and all(
        line.startswith("nisa.nc_matmul(dst=tensor_2, stationary=") for line in matmuls
    )
    copy = lines.index("nisa.tensor_copy(dst=tensor_2_sb, src=tensor_2)")
    store = lines.index("nisa.dma_copy(dst=output, src=tensor_2_sb)")
    assert lines.index(matmuls[-1]) < copy < store


def test_transpose_goes_through_psum() -> None:
    lines = _lines(ng.emit(tiled(CASE["scaled_transpose"]), backend="nki", roll_loops=False))
    assert "nisa.nc_transpose(dst=tensor_1_psum, data=tensor_0)" in lines
    assert "nisa.tensor_copy(dst=tensor_1, src=tensor_1_psum)" in lines
    assert "nisa.tensor_scalar(dst=tensor_2, data=tensor_1, op0=nl.multiply, operand0=0.5)" in lines


def test_vector_and_scalar_engines_read_psum_directly() -> None:
    text = ng.emit(tiled(CASE["matmul_tanh"]), backend="nki", roll_loops=False)
    assert "nisa.activation(dst=tensor_5, op=nl.tanh, data=tensor_2)" in _lines(text)
    text = ng.emit(tiled(CASE["matmul_bias"]), backend="nki", roll_loops=False)
    assert "nisa.tensor_tensor(dst=tensor_8, data1=tensor_2, data2=tensor_7, op=nl.add)" in _lines(text)


def test_reductions_use_tensor_reduce_keywords() -> None:
    lines = _lines(ng.emit(tiled(CASE["row_sum"]), backend="nki", roll_loops=False))
    assert "nisa.tensor_reduce(dst=tensor_1, op=nl.add, data=tensor_0, axis=1, keepdims=True)" in lines
    # `+=` partial sums are reduced into a scratch tile and added in
    assert any(
        line.startswith("nisa.tensor_tensor(dst=tensor_1, data1=tensor_1, data2=tensor_1_part")
        for line in lines
    )
    lines = _lines(ng.emit(tiled(CASE["row_max"]), backend="nki", roll_loops=False))
    assert any("op=nl.maximum" in line and line.startswith("nisa.tensor_reduce(") for line in lines)


def test_unstored_output_regions_are_zero_and_accumulating_stores_add(rng: np.random.Generator) -> None:
    statements = [
        Statement(ALLOC, (Operand("output", ((0, 256), (0, 128))),), make_attrs(dtype="float32")),
        Statement(LOAD, (Operand("a", ((0, 128), (0, 128))), Operand("t0", ((0, 128), (0, 128))))),
        Statement(LOAD, (Operand("a", ((128, 256), (0, 128))), Operand("t1", ((0, 128), (0, 128))))),
        Statement(STORE, (Operand("t0", ((0, 128), (0, 128))), Operand("output", ((0, 128), (0, 128))))),
        Statement(
            STORE, (Operand("t1", ((0, 128), (0, 128))), Operand("output", ((0, 128), (0, 128)))), (), True
        ),
    ]
    program = ng.Program("partial", [ng.Param("a", (256, 128))], statements, "output")
    arrays = inputs(program, rng)
    artifact, out, _ = run(program, arrays)
    assert "nisa.memset(dst=output_zeros, value=0.0)" in artifact.text
    assert "dst_rmw_op=nl.add" in artifact.text
    expected = np.zeros((256, 128), np.float32)
    expected[:128] = arrays["a"][:128] + arrays["a"][128:]
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    np.testing.assert_allclose(out, ng.interpret(program, **arrays), rtol=1e-6)


def test_reserved_names_are_renamed(rng: np.random.Generator) -> None:
    program = ng.parse_program("""
def nl(nisa):
    output = nkigym.ndarray((128, 128), dtype=np.float32)
    tensor_0 = nisa[0:128, 0:128]
    tensor_1 = nkigym.activation(tensor_0, op="exp")
    output[0:128, 0:128] = tensor_1
    return output
""")
    artifact, out, _ = run(program, inputs(program, rng))
    assert "def nl_(nisa_):" in artifact.text
    np.testing.assert_allclose(out, np.exp(inputs(program, np.random.default_rng(1234))["nisa"]), rtol=1e-5)


def test_loop_variables_do_not_clash_with_program_names(rng: np.random.Generator) -> None:
    program = ng.tile(lambda i0, i1: ng.nc_matmul(i0, i1), {"i0": (256, 256), "i1": (256, 256)})
    arrays = inputs(program, rng)
    artifact, out, _ = run(program, arrays)
    assert "(i0, i1):" in artifact.text
    assert "for it0 in range(" in artifact.text and "for i0 in" not in artifact.text
    np.testing.assert_allclose(out, arrays["i0"].T @ arrays["i1"], rtol=1e-4, atol=1e-4)
