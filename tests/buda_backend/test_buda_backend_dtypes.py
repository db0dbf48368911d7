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


def softmax(x):
    e = ng.activation(x, op="exp", bias=ng.tensor_scalar(ng.tensor_reduce(x, op="max"), -1.0))
    return ng.tensor_scalar(e, ng.activation(ng.tensor_reduce(e, op="sum"), op="reciprocal"))


@pytest.mark.parametrize("arch", ["wormhole_b0", "blackhole"])
def test_a_float16_reduce_does_not_accumulate_in_float32(arch: str) -> None:
    """The backend refuses a reduce with a Float32 dest reading an exponent-a format such
    as Float16 (tt-budabackend issue #1464); a float16 softmax's row maximum was emitted
    so on Wormhole B0 and Blackhole, and the checker passed it. Ops with a reduce now
    accumulate in Float16 (a 16-bit dest holds the ublocks a Float32 one does)."""
    program = ng.tile(softmax, {"x": (64, 96)}, target=arch, dtype="float16")
    artifact = ng.emit_artifact(program, backend="buda", arch=arch)
    assert ng.check_netlist(artifact.text, min_severity="info") == []
    netlist = ng.load_netlist(artifact.text)
    reducing = [
        op
        for op in netlist.all_ops()
        if op.type == "reduce"
        or (
            op.type == "fused_op"
            and any(sub.is_reduce for _, _, sub in netlist.fused_ops[op.fused_op_id].sub_ops())
        )
    ]
    assert reducing and {op.acc_df for op in reducing} == {"Float16"}
    assert {op.acc_df for op in netlist.all_ops() if op not in reducing} <= {"Float32"}
    x = np.random.default_rng(0).standard_normal((64, 96)).astype(np.float16).astype(np.float64)
    (result,) = run_netlist(artifact, {"x": x}).values()
    assert_matches_program(result, ng.interpret(program, x=x), artifact)
