"""A program's dtype sets the netlist's data formats: bfloat16 is Float16_b, float16 is
Float16; float32 keeps the architecture's own (Float32, Float16_b on Grayskull)."""

from __future__ import annotations

import numpy as np
import pytest
from buda_backend.programs import assert_matches_program

import nkigym_graph as ng
from nkigym_graph.buda.quantize import quantize
from nkigym_graph.ir.dtypes import resolve_dtype
from nkigym_graph_plugins.buda_backend import run_netlist


def matmul(a, b):
    return ng.nc_matmul(a, b)


@pytest.mark.parametrize(
    ("dtype", "arch", "data", "acc"),
    [
        ("bfloat16", "wormhole_b0", "Float16_b", "Float32"),
        ("bfloat16", "grayskull", "Float16_b", "Float16_b"),
        ("float16", "wormhole_b0", "Float16", "Float32"),
        ("float32", "wormhole_b0", "Float32", "Float32"),
        ("float32", "grayskull", "Float16_b", "Float16_b"),
    ],
)
def test_the_program_dtype_sets_the_data_formats(dtype: str, arch: str, data: str, acc: str) -> None:
    program = ng.tile(matmul, {"a": (128, 64), "b": (128, 96)}, target=ng.WORMHOLE_B0, dtype=dtype)
    artifact = ng.emit_artifact(program, backend="buda", arch=arch)
    assert ng.check_netlist(artifact.text, strict=True) == []
    netlist = ng.load_netlist(artifact.text)
    assert {q.df for q in netlist.queues.values()} == {data}
    for op in netlist.all_ops():
        assert set(op.in_df) == {op.out_df} == {op.intermed_df} == {data}
        assert op.acc_df == acc
    rng = np.random.default_rng(0)
    held = resolve_dtype(dtype)  # what a program of this dtype is given
    inputs = {
        name: rng.standard_normal(shape).astype(held).astype(np.float64)
        for name, shape in (("a", (128, 64)), ("b", (128, 96)))
    }
    (result,) = run_netlist(artifact, inputs).values()
    # the evaluator stores every queue and op output in the netlist's format
    assert np.array_equal(result, quantize(result, data))
    assert_matches_program(result, ng.interpret(program, **inputs), artifact)
