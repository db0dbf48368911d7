"""The numpy evaluator against plain numpy on random inputs."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from buda.builders import queue

from nkigym_graph.buda import (
    NetlistError,
    NetlistEvaluationError,
    check_netlist,
    evaluate_netlist,
    load_netlist,
)

NETLISTS = Path(__file__).parent / "netlists"
RNG = np.random.default_rng(2024)
BF16_RTOL = 2.0**-7
"""One bfloat16 step (8 significant bits): the evaluator stores Float16_b data as bfloat16."""


def normal(*shape: int, dtype: object = np.float32) -> np.ndarray:
    """Random values that ``dtype`` holds exactly (what a queue of that format can store)."""
    return RNG.standard_normal(shape).astype(dtype).astype(np.float64)


def _queue(
    name: str,
    source: str,
    grid: tuple[int, int],
    t: int,
    mb: tuple[int, int],
    ub: tuple[int, int],
    slot: int,
) -> str:
    return queue(name, source, slot, grid=grid, t=t, mblock=mb, ublock=ub)


def _op(
    name: str,
    body: str,
    grid: tuple[int, int],
    loc: tuple[int, int],
    t: int,
    mb: tuple[int, int],
    ub: tuple[int, int],
) -> str:
    return (
        f"    {name}: {{{body}, grid_loc: [{loc[0]}, {loc[1]}], grid_size: [{grid[0]}, {grid[1]}], t: {t}, "
        f"mblock: [{mb[0]}, {mb[1]}], ublock: [{ub[0]}, {ub[1]}], acc_df: Float32, "
        f"out_df: Float32, intermed_df: Float32, math_fidelity: HiFi4}}\n"
    )


def matmul_netlist(m_k: int, u_kt: int, fused: bool) -> str:
    """[2 x 64 x (m_k*u_kt*32)] @ [.. x 64]: a 2x1 grid, t = 2."""
    a = _queue("a", "HOST", (2, 1), 2, (1, m_k), (1, u_kt), 0)
    b = _queue("b", "HOST", (1, 1), 2, (m_k, 1), (u_kt, 2), 1)
    c = _queue("c", "mm", (2, 1), 2, (1, 1), (1, 2), 2)
    attributes = f"{{m_k: {m_k}, u_kt: {u_kt}}}"
    if fused:
        body = "type: fused_op, inputs: [a, b], in_df: [Float32, Float32], attributes: {fused_op_id: 0}"
        output = "intermed0" if m_k > 1 else "output"
        schedules = (
            f"      - - mm: {{type: matmul, inputs: [input0, input1], attributes: {attributes}, "
            f"mblock: [1, 1], ublock: [1, 2], output: {output}}}\n"
        )
        if m_k > 1:
            schedules += (
                "      - - copy: {type: datacopy, inputs: [intermed0], pop: [intermed0], "
                "mblock: [1, 1], ublock: [1, 2], output: output}\n"
            )
        fused_ops = f"fused_ops:\n  0:\n    inputs: 2\n    intermediates: 1\n    schedules:\n{schedules}"
    else:
        body = f"type: matmul, inputs: [a, b], in_df: [Float32, Float32], attributes: {attributes}"
        fused_ops = ""
    op = _op("mm", body, (2, 1), (0, 0), 2, (1, 1), (1, 2))
    programs = "programs:\n  - run: [{execute: {graph_name: g}}]\n"
    return f"devices: {{arch: wormhole_b0}}\nqueues:\n{a}{b}{c}graphs:\n  g:\n{op}{programs}{fused_ops}"


@pytest.mark.parametrize("fused", [False, True], ids=["graph_op", "fused_op"])
@pytest.mark.parametrize(("m_k", "u_kt"), [(1, 4), (2, 2), (4, 1), (3, 1)])
def test_matmul_matches_numpy(m_k: int, u_kt: int, fused: bool) -> None:
    text = matmul_netlist(m_k, u_kt, fused)
    assert check_netlist(text) == []
    k = m_k * u_kt * 32
    a, b = RNG.standard_normal((2, 64, k)), RNG.standard_normal((2, k, 64))
    out = evaluate_netlist(text, {"a": a, "b": b})["c"]
    assert out.shape == (2, 64, 64) and out.dtype == np.float32
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-4)


def test_matmul_inner_dim_must_match_m_k_u_kt() -> None:
    text = matmul_netlist(2, 2, fused=False).replace("{m_k: 2, u_kt: 2}", "{m_k: 3, u_kt: 2}")
    with pytest.raises(NetlistEvaluationError, match=r"op 'mm'.*m_k \* u_kt = 3 \* 2"):
        evaluate_netlist(text, {"a": np.zeros((2, 64, 128)), "b": np.zeros((2, 128, 64))})


def test_fused_matmul_bias_relu() -> None:
    path = NETLISTS / "matmul_bias_relu.yaml"
    assert check_netlist(path) == []
    bf16 = ml_dtypes.bfloat16
    x, w = normal(128, 96, dtype=bf16), normal(96, 64, dtype=bf16)
    bias = normal(32, 64, dtype=bf16)  # a tile row; row 0 is the bias
    out = evaluate_netlist(path, {"x": x, "w": w, "bias": bias})["y"]
    # m_k = 3 steps of one tile: the partial sum waits in intermed0 (Float16_b) between them
    partial = x[:, :32] @ w[:32]
    for k in (1, 2):
        partial = (
            partial.astype(bf16).astype(np.float64) + x[:, 32 * k : 32 * k + 32] @ w[32 * k : 32 * k + 32]
        )
    expected = np.maximum(partial.astype(bf16).astype(np.float64) + bias[0], 0.0)
    assert out.shape == (128, 64)
    assert (out == 0).any() and (out > 0).any()
    assert np.array_equal(out, out.astype(bf16).astype(np.float32))  # stored as Float16_b
    np.testing.assert_allclose(out, expected, rtol=2 * BF16_RTOL, atol=BF16_RTOL)


def test_layernorm_like_chain_with_reduce() -> None:
    path = NETLISTS / "layernorm.yaml"
    assert check_netlist(path, ignore=["ops.reduce_type"]) == []
    x = normal(64, 128) * 3.0 + 1.5
    eps = 1e-5
    inputs = {"x": x, "inv_n": np.full((64, 32), 1.0 / 128), "epsilon": np.full((64, 32), eps)}
    out = evaluate_netlist(path, inputs)["y"]
    centred = x - x.mean(axis=1, keepdims=True)
    expected = centred / np.sqrt((centred**2).mean(axis=1, keepdims=True) + eps)
    # intermediates and dest hold Float16_b: a few bfloat16 steps apart after the chain
    np.testing.assert_allclose(out, expected, rtol=4 * BF16_RTOL, atol=4 * BF16_RTOL)


@pytest.mark.parametrize("name", ["double_matmul_fused", "double_matmul_graph"])
def test_double_matmul(name: str) -> None:
    text = (NETLISTS / f"{name}.yaml").read_text()
    assert check_netlist(text) == []
    a, b, c = RNG.standard_normal((128, 96)), RNG.standard_normal((96, 128)), RNG.standard_normal((128, 64))
    out = evaluate_netlist(text, {"a": a, "b": b, "c": c})["out"]
    np.testing.assert_allclose(out, (a @ b) @ c, rtol=1e-5, atol=1e-3)


def one_op(
    body: str,
    in_shape: tuple[tuple[int, int], tuple[int, int], int],
    out: tuple[tuple[int, int], tuple[int, int], int],
    extra: str = "",
    inputs: int = 1,
) -> str:
    """A netlist with host queues in0.. and one op 'op' writing queue 'out'."""
    (imb, iub, it), (omb, oub, ot) = in_shape, out
    queues = "".join(_queue(f"in{i}", "HOST", (1, 1), it, imb, iub, i) for i in range(inputs))
    queues += _queue("out", "op", (1, 1), ot, omb, oub, 7)
    names = ", ".join(f"in{i}" for i in range(inputs))
    op = _op("op", f"type: {body}, inputs: [{names}]{extra}", (1, 1), (0, 0), ot, omb, oub)
    return f"devices: {{arch: wormhole_b0}}\nqueues:\n{queues}graphs:\n  g:\n{op}"


def test_elementwise_ops_and_relu_modes() -> None:
    x = RNG.standard_normal((64, 64))
    shape = ((2, 2), (1, 1), 1)
    cases = {
        "exp": np.exp(x),
        "sigmoid": 1 / (1 + np.exp(-x)),
        "tanh": np.tanh(x),
        "gelu": 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
        "square": x * x,
        "abs": np.abs(x),
    }
    for op_type, expected in cases.items():
        out = evaluate_netlist(one_op(op_type, shape, shape), {"in0": x})["out"]
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6, err_msg=op_type)
    relu_min = one_op("datacopy", shape, shape, ", attributes: {relu_en: true, relu_threshold: 0.5}")
    out = evaluate_netlist(relu_min, {"in0": x})["out"]
    np.testing.assert_allclose(out, np.where(x > 0.5, x, 0.0), rtol=1e-6)
    relu_max = one_op(
        "datacopy", shape, shape, ", attributes: {relu_en: true, relu_mode: max, relu_threshold: 0.5}"
    )
    out = evaluate_netlist(relu_max, {"in0": x})["out"]
    np.testing.assert_allclose(out, np.clip(x, 0.0, 0.5), rtol=1e-6)


def test_binary_ops_with_graph_level_broadcast_and_transpose() -> None:
    x, row = normal(64, 64), normal(32, 64)
    text = one_op(
        "maximum", ((2, 2), (1, 1), 1), ((2, 2), (1, 1), 1), inputs=2, extra=", input_1_tms: [transpose]"
    )
    out = evaluate_netlist(text, {"in0": x, "in1": x.copy()})["out"]
    np.testing.assert_allclose(out, np.maximum(x, x.T), rtol=1e-6)
    queues = _queue("x", "HOST", (1, 1), 1, (2, 2), (1, 1), 0) + _queue(
        "r", "HOST", (1, 1), 1, (1, 2), (1, 1), 1
    )
    queues += _queue("out", "op", (1, 1), 1, (2, 2), (1, 1), 2)
    op = _op(
        "op",
        "type: subtract, inputs: [x, r], input_1_tms: [broadcast: {r: 2}]",
        (1, 1),
        (0, 0),
        1,
        (2, 2),
        (1, 1),
    )
    out = evaluate_netlist(f"queues:\n{queues}graphs:\n  g:\n{op}", {"x": x, "r": row})["out"]
    np.testing.assert_allclose(out, x - np.tile(row, (2, 1)), rtol=1e-6)


def test_reduce_leaves_results_in_row_or_column_zero_of_a_tile() -> None:
    x = RNG.standard_normal((3, 64, 96))
    by_rows = one_op("reduce", ((2, 3), (1, 1), 3), ((1, 3), (1, 1), 3), ", attributes: {dim: r, type: max}")
    out = evaluate_netlist(by_rows, {"in0": x})["out"]
    np.testing.assert_allclose(out[:, 0, :], x.max(axis=1), rtol=1e-6)
    assert not out[:, 1:, :].any()
    by_cols = one_op("reduce", ((2, 3), (1, 1), 3), ((2, 1), (1, 1), 3), ", attributes: {dim: c, type: max}")
    out = evaluate_netlist(by_cols, {"in0": x})["out"]
    np.testing.assert_allclose(out[:, :, 0], x.max(axis=2), rtol=1e-6)
    assert not out[:, :, 1:].any()


def test_slicing_tms_round_trip() -> None:
    x = RNG.standard_normal((2, 64, 128))
    extra = ", input_0_tms: [hslice: 4, vstack: 2]"
    text = one_op("datacopy", ((2, 4), (1, 1), 2), ((4, 1), (1, 1), 4), extra)
    out = evaluate_netlist(text, {"in0": x})["out"]
    slices = [x[z][:, 32 * i : 32 * (i + 1)] for z in range(2) for i in range(4)]
    expected = np.stack([np.vstack(slices[2 * k : 2 * k + 2]) for k in range(4)])
    np.testing.assert_allclose(out, expected)


def test_loops_run_the_graph_and_gradient_ops_accumulate() -> None:
    x = normal(32, 32)
    queues = _queue("in0", "HOST", (1, 1), 1, (1, 1), (1, 1), 0) + _queue(
        "acc", "op", (1, 1), 1, (1, 1), (1, 1), 1
    )
    op = _op("op", "type: datacopy, inputs: [in0], gradient_op: true", (1, 1), (0, 0), 1, (1, 1), (1, 1))
    program = (
        "programs:\n  - train:\n    - var: [$n]\n    - varinst: [$n, set, 3]\n    - loop: $n\n"
        "    - execute: {graph_name: g}\n    - endloop\n"
    )
    text = f"queues:\n{queues}graphs:\n  g:\n{op}{program}"
    np.testing.assert_allclose(evaluate_netlist(text, {"in0": x})["acc"], 3 * x, rtol=1e-6)
    start = normal(32, 32)
    np.testing.assert_allclose(  # each pass stores the sum in the Float32 queue
        evaluate_netlist(text, {"in0": x, "acc": start})["acc"], start + 3 * x, rtol=1e-6, atol=1e-6
    )


def test_errors_name_the_problem() -> None:
    shape = ((1, 1), (1, 1), 1)
    with pytest.raises(NetlistEvaluationError, match="reads queue 'in0', which holds no data"):
        evaluate_netlist(one_op("exp", shape, shape), {})
    with pytest.raises(NetlistEvaluationError, match=r"input 'in0'.*\(32, 32\)"):
        evaluate_netlist(one_op("exp", shape, shape), {"in0": np.zeros((64, 32))})
    with pytest.raises(NetlistEvaluationError, match=r"input 'nope'.*not a queue"):
        evaluate_netlist(one_op("exp", shape, shape), {"nope": np.zeros((32, 32))})
    with pytest.raises(NetlistEvaluationError, match=r"op 'op'.*'dropout' is not evaluated"):
        evaluate_netlist(one_op("dropout", shape, shape), {"in0": np.zeros((32, 32))})


def test_fused_op_reading_a_popped_intermediate_fails() -> None:
    text = (
        (NETLISTS / "layernorm.yaml")
        .read_text()
        .replace(
            "input_1_tms: [broadcast: {c: 4}, tile_broadcast: c], pop: [intermed2]",
            "input_1_tms: [broadcast: {c: 4}, tile_broadcast: c], pop: [intermed2, intermed1]",
        )
    )
    inputs = {"x": np.ones((64, 128)), "inv_n": np.ones((64, 32)), "epsilon": np.ones((64, 32))}
    with pytest.raises(NetlistEvaluationError, match="sub-op 'scale': reads intermed1, which holds no value"):
        evaluate_netlist(text, inputs)


@pytest.mark.parametrize("instruction", [5, [1, 2], 2.5])
def test_a_program_instruction_that_is_no_name_or_map_is_named(instruction: object) -> None:
    import yaml

    import nkigym_graph as ng

    program = ng.tile(lambda a, b: ng.nc_matmul(a, b), {"a": (64, 64), "b": (64, 64)}, target=ng.WORMHOLE_B0)
    document = yaml.safe_load(ng.emit_artifact(program, backend="buda").text)
    (body,) = document["programs"][0].values()
    body.append(instruction)
    inputs = {"a_t": np.ones((64, 64)), "b": np.ones((64, 64))}
    with pytest.raises(ng.NetlistEvaluationError, match="an instruction is a name or a one-key map"):
        ng.evaluate_netlist(yaml.safe_dump(document), inputs)


@pytest.mark.parametrize("fused", [False, True], ids=["graph_op", "fused_op"])
def test_a_matmul_given_one_input_is_named(fused: bool) -> None:
    """The graph op, or the fused op's matmul sub-op, reads one input where it needs two."""
    text = matmul_netlist(1, 4, fused)
    if fused:
        text = text.replace("inputs: [input0, input1]", "inputs: [input0]")
    else:
        text = text.replace("inputs: [a, b]", "inputs: [a]")
    with pytest.raises(NetlistEvaluationError, match=r"op 'mm'.*matmul takes 2 input\(s\), got 1"):
        evaluate_netlist(text, {"a": np.zeros((2, 64, 128)), "b": np.zeros((2, 128, 64))})


@pytest.mark.parametrize("fused", [False, True], ids=["graph_op", "fused_op"])
def test_a_matmul_attribute_that_is_no_integer_names_the_field(fused: bool) -> None:
    """``m_k: one`` is refused when the netlist is read, on a graph op as on a sub-op."""
    text = matmul_netlist(2, 2, fused).replace("m_k: 2", "m_k: one")
    with pytest.raises(NetlistError, match=r"op 'mm'.*attributes field 'm_k': must be an integer, got 'one'"):
        load_netlist(text)
