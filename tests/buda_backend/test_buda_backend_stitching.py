"""Stitched weights (``weight_stitch``) in Buda netlists: one queue and one input buffer.

A netlist cannot give an op a column range of an input, so the backend reads a stitched
parameter as the stacked weight of one matmul: ``sum_i x @ w_i`` is
``[x | ... | x] @ [w_1; ...; w_N]`` (see ``nkigym_graph_plugins.buda_backend.stitched``).
"""

from __future__ import annotations

import doctest
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from buda_backend.programs import assert_matches_program

import nkigym_graph as ng
from nkigym_graph.buda import check_netlist
from nkigym_graph.ir.targets import BLACKHOLE, GRAYSKULL, WORMHOLE_B0, Target
from nkigym_graph.stitching import circular_buffers, stitch_inputs
from nkigym_graph_plugins.buda_backend import BudaEmitError, lift, run_netlist

RNG_SEED = 3
STITCHED = "stitched__w1_64x64__w2_64x64__w3_64x64"


def three(x: Any, w1: Any, w2: Any, w3: Any) -> Any:
    q, k, v = ng.nc_matmul(x, w1), ng.nc_matmul(x, w2), ng.nc_matmul(x, w3)
    return ng.tensor_tensor(ng.tensor_tensor(q, k, op="add"), v, op="add")


THREE = {"x": (64, 32), "w1": (64, 64), "w2": (64, 64), "w3": (64, 64)}


def stitched(
    func: Callable[..., Any], shapes: dict[str, tuple[int, int]], target: Target = WORMHOLE_B0
) -> tuple[ng.Program, ng.Program]:
    program = ng.tile(func, shapes, target=target)
    (match,) = ng.analyze(program, "weight_stitch")
    return program, ng.apply(program, "weight_stitch", match)


def random_inputs(shapes: dict[str, tuple[int, int]]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(RNG_SEED)
    return {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}


def assert_runs_like_interpret(
    artifact: ng.Artifact, program: ng.Program, inputs: dict[str, Any]
) -> np.ndarray:
    """The netlist's output on ``inputs`` (stitched by the host helper) equals ``interpret``."""
    given = stitch_inputs(program, inputs)
    got = run_netlist(artifact, given)["output"]
    assert_matches_program(got, ng.interpret(program, **given), artifact)
    return got


def the_op(artifact: ng.Artifact) -> dict[str, Any]:
    (graph,) = artifact.parsed["graphs"].values()
    (op,) = graph.values()
    return op


def test_three_weights_become_one_queue_and_two_fewer_input_buffers() -> None:
    program, stitched_program = stitched(three, THREE)
    assert [p.name for p in program.params] == ["x", "w1", "w2", "w3"]
    assert [p.name for p in stitched_program.params] == ["x", STITCHED]
    before = ng.emit_artifact(program, backend="buda")
    after = ng.emit_artifact(stitched_program, backend="buda")
    assert check_netlist(after.parsed, WORMHOLE_B0, strict=True) == []
    assert after.facts["host_queues"] == {
        "x_t": {"param": "x", "transposed": True},
        STITCHED: {"param": STITCHED, "transposed": False},
    }
    op = the_op(after)
    assert op["inputs"] == ["x_t", STITCHED]
    assert op["input_0_tms"] == [{"broadcast": {"c": 3}}]
    assert op["input_1_tms"] == [{"hslice": 3}, {"vstack": 3}]

    inputs = random_inputs(THREE)
    got = assert_runs_like_interpret(after, stitched_program, inputs)
    x, w1, w2, w3 = (inputs[n].astype(np.float64) for n in ("x", "w1", "w2", "w3"))
    assert_matches_program(got, x.T @ w1 + x.T @ w2 + x.T @ w3, after)

    counts = [circular_buffers(a.parsed) for a in (before, after)]
    assert [c.inputs for c in counts] == [4, 2]  # x and three weights, then x and the stitched tensor
    # 4 inputs, 1 intermediate (the partial sums have equal ublocks and share it), 1 output
    assert before.facts["circular_buffers"] == 6
    assert after.facts["circular_buffers"] == 4  # 2 inputs, 1 intermediate (m_k partials), 1 output
    assert counts[0].inputs - counts[1].inputs == 3 - 1  # N - 1 for N = 3 weights


@pytest.mark.parametrize("target", [GRAYSKULL, BLACKHOLE, ng.TRN2], ids=lambda t: t.name)
def test_every_arch_and_tiling_reads_the_stitched_queue_once(target: Target) -> None:
    shapes = {"x": (128, 64), "w1": (128, 96), "w2": (128, 96), "w3": (128, 96)}
    program, stitched_program = stitched(three, shapes, target)
    arch = target.name if target.family == "tenstorrent" else "wormhole_b0"
    before = ng.emit_artifact(program, backend="buda", arch=arch)
    after = ng.emit_artifact(stitched_program, backend="buda", arch=arch)
    assert_runs_like_interpret(after, stitched_program, random_inputs(shapes))
    assert circular_buffers(after.parsed).inputs == circular_buffers(before.parsed).inputs - 2
    assert after.facts["circular_buffers"] < before.facts["circular_buffers"]


def many(count: int) -> tuple[Callable[..., Any], dict[str, tuple[int, int]]]:
    """``sum_i x @ w_i`` over ``count`` weights (a signature naming each one, as the tiler wants)."""
    names = ["x", *(f"w{i}" for i in range(count))]

    def func(x: Any, *weights: Any) -> Any:
        total = ng.nc_matmul(x, weights[0])
        for w in weights[1:]:
            total = ng.tensor_tensor(total, ng.nc_matmul(x, w), op="add")
        return total

    func.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    )
    return func, {n: (32, 32) for n in names}


def test_many_weights_are_split_by_the_fused_input_limit_and_one_op_once_stitched() -> None:
    func, shapes = many(30)
    program, stitched_program = stitched(func, shapes)
    before = ng.emit_artifact(program, backend="buda")
    # 31 inputs do not fit one fused op (16 at most): Buda splits the kernel before its CBs run out.
    assert before.facts["ops"] == 3
    assert list(before.facts["fusion_splits"].values()) == [["limits.inputs"]] * 2
    assert before.facts["circular_buffers"] == 19 and before.facts["circular_buffers_fit"]
    after = ng.emit_artifact(stitched_program, backend="buda")
    assert (after.facts["ops"], after.facts["fusion_splits"]) == (1, {})
    assert circular_buffers(after.parsed).inputs == 2
    assert after.facts["circular_buffers"] == 4 and after.facts["circular_buffers_fit"]
    assert_runs_like_interpret(after, stitched_program, random_inputs(shapes))


@pytest.mark.parametrize("target", [GRAYSKULL, WORMHOLE_B0, BLACKHOLE], ids=lambda t: t.name)
def test_no_checked_fused_op_can_exceed_the_circular_buffer_limit(target: Target) -> None:
    """Why ``emit`` never meets a kernel over the CB limit: a fused op has at most 16 inputs,
    8 intermediates and its output, and the emitter splits a kernel that would need more."""
    facts = target.facts
    assert facts["fused_max_inputs"] + facts["fused_max_intermediates"] + 1 < facts["circular_buffer_limit"]


def sum_then_exp(x: Any, w1: Any, w2: Any, w3: Any) -> Any:
    q, k, v = ng.nc_matmul(x, w1), ng.nc_matmul(x, w2), ng.nc_matmul(x, w3)
    return ng.activation(ng.tensor_tensor(q, ng.tensor_tensor(k, v, op="add"), op="add"), op="tanh")


def computed_x(x: Any, w1: Any, w2: Any) -> Any:
    x2 = ng.activation(x, op="tanh")
    return ng.tensor_tensor(ng.nc_matmul(x2, w1), ng.nc_matmul(x2, w2), op="add")


def sum_plus_bias(x: Any, b: Any, w1: Any, w2: Any) -> Any:
    total = ng.tensor_tensor(ng.nc_matmul(x, w1), ng.nc_matmul(x, w2), op="add")
    return ng.tensor_tensor(total, b, op="add")


@pytest.mark.parametrize(
    ("func", "shapes", "fused"),
    [
        (sum_then_exp, THREE, 1),
        (computed_x, {"x": (64, 32), "w1": (64, 64), "w2": (64, 64)}, 0),
        (sum_plus_bias, {"x": (64, 32), "b": (32, 64), "w1": (64, 64), "w2": (64, 64)}, 1),
    ],
    ids=["fused_with_its_reader", "x_computed_in_the_netlist", "then_a_bias"],
)
def test_the_stacked_matmul_works_inside_larger_programs(
    func: Callable[..., Any], shapes: dict[str, tuple[int, int]], fused: int
) -> None:
    _, stitched_program = stitched(func, shapes)
    artifact = ng.emit_artifact(stitched_program, backend="buda")
    assert artifact.facts["fused_ops"] == fused
    stitched_name = next(p.name for p in stitched_program.params if p.name.startswith("stitched__"))
    readers = [
        op for g in artifact.parsed["graphs"].values() for op in g.values() if stitched_name in op["inputs"]
    ]
    assert len(readers) == 1 and readers[0]["inputs"].count(stitched_name) == 1
    assert_runs_like_interpret(artifact, stitched_program, random_inputs(shapes))


def test_lift_gives_each_stitched_weight_its_own_value() -> None:
    _, stitched_program = stitched(three, THREE)
    graph = lift(stitched_program)
    views = {v.name: (v.view.columns, v.shape) for v in graph.values if v.view is not None}
    assert views == {"w1": ((0, 64), (64, 64)), "w2": ((64, 128), (64, 64)), "w3": ((128, 192), (64, 64))}
    matmuls = [v for v in graph.values if v.op is not None and v.op.name == "nc_matmul"]
    assert sorted(graph[m.inputs[1]].name for m in matmuls) == ["w1", "w2", "w3"]


def qkv_like(x: Any, w1: Any, w2: Any, w3: Any) -> Any:
    q, k, v = ng.nc_matmul(x, w1), ng.nc_matmul(x, w2), ng.nc_matmul(x, w3)
    return ng.tensor_tensor(ng.tensor_tensor(q, k, op="multiply"), v, op="add")


def two_x(x: Any, y: Any, w1: Any, w2: Any) -> Any:
    return ng.tensor_tensor(ng.nc_matmul(x, w1), ng.nc_matmul(y, w2), op="add")


def bias_inside(x: Any, b: Any, w1: Any, w2: Any) -> Any:
    return ng.tensor_tensor(ng.tensor_tensor(ng.nc_matmul(x, w1), b, op="add"), ng.nc_matmul(x, w2), op="add")


def partial_reused(x: Any, w1: Any, w2: Any, w3: Any) -> Any:
    q, k, v = ng.nc_matmul(x, w1), ng.nc_matmul(x, w2), ng.nc_matmul(x, w3)
    qk = ng.tensor_tensor(q, k, op="add")
    return ng.tensor_tensor(ng.tensor_tensor(qk, v, op="add"), qk, op="multiply")


@pytest.mark.parametrize(
    ("func", "shapes", "problem"),
    [
        (
            qkv_like,
            THREE,
            r"nc_matmul_\d+ is read by tensor_tensor_\d+ \(tensor_tensor multiply\), which is not an add",
        ),
        (
            two_x,
            {"x": (64, 32), "y": (64, 32), "w1": (64, 64), "w2": (64, 64)},
            "its weights multiply different x",
        ),
        (
            bias_inside,
            {"x": (64, 32), "b": (32, 64), "w1": (64, 64), "w2": (64, 64)},
            "the sum of its products also adds b",
        ),
        (partial_reused, THREE, r"tensor_tensor_\d+ is read by 2 ops, not only by the sum of the products"),
    ],
    ids=["product_multiplied", "two_x", "bias_inside_the_sum", "partial_sum_reused"],
)
def test_other_uses_of_stitched_weights_are_refused_with_the_reason(
    func: Callable[..., Any], shapes: dict[str, tuple[int, int]], problem: str
) -> None:
    _, stitched_program = stitched(func, shapes)
    with pytest.raises(BudaEmitError, match=problem) as caught:
        ng.emit_artifact(stitched_program, backend="buda")
    message = str(caught.value)
    assert message.startswith("statement `") and "stitched parameter stitched__w1_64x64__w2_64x64" in message
    assert (
        "cannot read a column range of one input" in message
        and "emit the program before weight_stitch" in message
    )


def _across_two_weights() -> ng.Program:
    """``three`` stitched, with the loads of w1 and w2 read as one tile (which no built-in
    merge does on a Tenstorrent target: the weights' boundary is a fence)."""
    text = f"""
def three(x, {STITCHED}):
    output = nkigym.ndarray((32, 64), dtype=np.float32)
    tensor_0 = x[0:64, 0:32]
    tensor_1 = {STITCHED}[0:64, 0:128]
    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    tensor_3 = nkigym.tensor_tensor(tensor_2[0:32, 0:64], tensor_2[0:32, 64:128], op="add")
    tensor_4 = {STITCHED}[0:64, 128:192]
    tensor_5 = nkigym.nc_matmul(tensor_0, tensor_4)
    tensor_6 = nkigym.tensor_tensor(tensor_3, tensor_5, op="add")
    output[0:32, 0:64] = tensor_6
    return output
"""
    return ng.parse_program(text, target=WORMHOLE_B0)


def test_a_load_across_two_weights_is_refused_with_the_statement() -> None:
    with pytest.raises(
        BudaEmitError,
        match=rf"loads columns 0:128 of stitched {STITCHED}, across its weights \(w1 0:64, w2 64:128\)",
    ):
        ng.emit_artifact(_across_two_weights(), backend="buda")


@pytest.mark.parametrize(
    "transforms", [None, ["free_dim_merge"], ["operand_merge"]], ids=["all", "free", "operand"]
)
def test_saturating_a_stitched_program_keeps_each_load_within_one_weight(
    transforms: list[str] | None,
) -> None:
    _, stitched_program = stitched(three, THREE)
    saturated = ng.saturate(stitched_program, transforms)
    spans = [
        s.operands[0].slices[1]
        for s in saturated.statements
        if s.op.name == "load" and s.operands[0].var == STITCHED
    ]
    assert sorted(spans) == [(0, 64), (64, 128), (128, 192)]
    artifact = ng.emit_artifact(saturated, backend="buda")
    assert check_netlist(artifact.parsed, WORMHOLE_B0, strict=True) == []
    inputs = random_inputs(THREE)
    got = assert_runs_like_interpret(artifact, saturated, inputs)
    x, w1, w2, w3 = (inputs[k].astype(np.float64) for k in ("x", "w1", "w2", "w3"))
    np.testing.assert_allclose(got, x.T @ (w1 + w2 + w3), rtol=1e-4, atol=1e-4)


def test_loads_merge_across_stitched_weights_where_the_backend_keeps_them_together() -> None:
    _, stitched_program = stitched(three, THREE, target=ng.TRN2)
    saturated = ng.saturate(stitched_program)
    spans = [
        s.operands[0].slices[1]
        for s in saturated.statements
        if s.op.name == "load" and s.operands[0].var == STITCHED
    ]
    assert spans == [(0, 192)]


def test_explain_names_the_fence_between_two_weights() -> None:
    _, stitched_program = stitched(three, THREE)
    loads = {
        s.operands[0].slices: node
        for node, s in stitched_program.items()
        if s.op.name == "load" and s.operands[0].var == STITCHED
    }
    rows = next(rows for rows, columns in loads if columns == (32, 64))
    w1, w2 = loads[(rows, (32, 64))], loads[(rows, (64, 96))]
    why = ng.explain(stitched_program, "free_dim_merge", w1, w2)
    assert f"meet at a fence: {STITCHED}'s range ends at 64 along dimension 1" in why
    assert "wormhole_b0" in why and "stitched weight ends" in why


def test_layout_docstring_examples_hold() -> None:
    from nkigym_graph_plugins.buda_backend import layout

    assert doctest.testmod(layout).failed == 0
