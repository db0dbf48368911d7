"""Recovering the tensor-level dataflow from tiled programs."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
from buda_backend.programs import CASES

import nkigym_graph as ng
from nkigym_graph.ir.targets import TRN2, WORMHOLE_B0
from nkigym_graph_plugins.buda_backend import BudaEmitError, lift
from nkigym_graph_plugins.buda_backend.tensor_graph import TensorGraph


def _summary(graph: TensorGraph) -> list[tuple[Any, ...]]:
    return [(v.op.name if v.op else v.name, v.attrs, v.inputs, v.shape) for v in graph.values]


def test_one_value_per_tensor_level_op_whatever_the_tiling() -> None:
    case = CASES["matmul_bias_relu"]
    wormhole = case.program(WORMHOLE_B0)
    rewritten = ng.saturate(wormhole, ["data_reuse", "operand_merge", "free_dim_merge", "dead_code"])
    summaries = [_summary(lift(p)) for p in (wormhole, case.program(TRN2), rewritten)]
    assert summaries[0] == summaries[1] == summaries[2]
    ops = [row[0] for row in summaries[0]]
    assert ops == ["a", "b", "bias", "nc_matmul", "tensor_tensor", "activation"]
    assert lift(wormhole).outputs == {"output": 5}


def test_recomputed_row_sums_are_one_value_and_tiles_are_recorded() -> None:
    graph = lift(CASES["layernorm_like"].program(WORMHOLE_B0))
    reduces = [v for v in graph.values if v.op is not None and v.op.name == "tensor_reduce"]
    assert len(reduces) == 2
    assert reduces[0].shape == (64, 1) and reduces[0].tile == (32, 1)
    transposes = [v for v in graph.values if v.op is not None and v.op.name == "nc_transpose"]
    assert [graph.consumers[t.id] for t in transposes] == [(t.id + 1,) for t in transposes]


def test_max_chunks_combined_by_maximum_are_one_reduction() -> None:
    def row_max(a: Any) -> Any:
        return ng.tensor_reduce(a, op="max")

    graph = lift(ng.tile(row_max, {"a": (64, 96)}, target=WORMHOLE_B0))
    assert [v.op.name if v.op else v.name for v in graph.values] == ["a", "tensor_reduce"]


def _program(body: str, params: str = "a, b", out: str = "(32, 32)") -> ng.Program:
    lines = "\n".join(f"    {line}" for line in textwrap.dedent(body).strip().splitlines())
    head = f"def f({params}):\n    output = nkigym.ndarray({out}, dtype=np.float32)\n"
    text = f"{head}{lines}\n    return output\n"
    return ng.parse_program(text)


BAD = {
    "a partial sum is read": (
        """
        tensor_0 = a[0:32, 0:32]
        tensor_1 = b[0:32, 0:32]
        tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
        tensor_3 = a[32:64, 0:32]
        tensor_4 = b[32:64, 0:32]
        tensor_5 = nkigym.nc_matmul(tensor_3, tensor_4)
        tensor_6 = nkigym.tensor_tensor(tensor_2, tensor_5, op="add")
        output[0:32, 0:32] = tensor_6
        """,
        r"reads tensor_2, a partial sum of nc_matmul_2 over chunks \[\(0, 32\)\] of 0:64",
    ),
    "operands are different tiles": (
        """
        tensor_0 = a[0:32, 0:32]
        tensor_1 = b[32:64, 0:32]
        tensor_2 = nkigym.tensor_tensor(tensor_0, tensor_1, op="add")
        output[0:32, 0:32] = tensor_2
        """,
        r"not a tile of a tensor-level tensor_tensor: operands cover different tiles",
    ),
    "an elementwise op accumulates": (
        """
        tensor_0 = a[0:32, 0:32]
        tensor_1 = b[0:32, 0:32]
        tensor_2 = nkigym.activation(tensor_0, op="exp")
        tensor_2[0:32, 0:32] += nkigym.activation(tensor_1, op="exp")
        output[0:32, 0:32] = tensor_2
        """,
        r"accumulates \(\+=\) an op that sums over no axis",
    ),
    "the output is a parameter": (
        """
        tensor_0 = a[0:32, 0:32]
        tensor_1 = b[0:32, 0:32]
        output[0:32, 0:32] = tensor_0
        """,
        r"stores a parameter unchanged",
    ),
}


@pytest.mark.parametrize("case", BAD)
def test_programs_that_are_not_tiles_of_tensor_ops_are_rejected_with_the_statement(case: str) -> None:
    body, message = BAD[case]
    program = _program(body)
    with pytest.raises(BudaEmitError, match=message) as info:
        lift(program)
    assert info.value.statement.startswith(("tensor_", "output["))


def test_a_partly_written_output_is_rejected() -> None:
    program = _program(
        """
        tensor_0 = a[0:32, 0:32]
        tensor_1 = a[32:64, 0:32]
        tensor_2 = nkigym.activation(tensor_0, op="exp")
        output[0:32, 0:32] = tensor_2
        """,
        params="a",
        out="(64, 32)",
    )
    with pytest.raises(
        BudaEmitError, match=r"the tiles of activation_1 \(shape \(64, 32\)\) do not cover it"
    ):
        lift(program)
