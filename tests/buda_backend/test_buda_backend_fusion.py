"""Fusion follows seed 004: checked here directly on the emitted documents, not only by
``check_netlist``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from buda_backend.programs import CASES, MORE_CASES

import nkigym_graph as ng
from nkigym_graph.ir.targets import TRN2, WORMHOLE_B0
from nkigym_graph_plugins.buda_backend import run_netlist

CONTRACTING = ("matmul", "reduce")


def _subs(schedule: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [next(iter(entry.values())) for entry in schedule]


def _fused_ops(parsed: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    ops = [op for graph in parsed["graphs"].values() for op in graph.values()]
    return [
        (op, parsed["fused_ops"][op["attributes"]["fused_op_id"]]) for op in ops if op["type"] == "fused_op"
    ]


def seed_rule_problems(parsed: dict[str, Any]) -> list[str]:
    """Breaches of seed 004 general rules 2-9 and unsupported 11 (an independent reading)."""
    arch = parsed["devices"]["arch"]
    problems = []
    for op, fused in _fused_ops(parsed):
        schedules = [_subs(s) for s in fused["schedules"]]
        matmuls = [s for sch in schedules for s in sch if s["type"] == "matmul"]
        if matmuls and op["grid_size"][1] != 1:
            problems.append("8: a fused op with a matmul needs grid [m, 1]")
        if op["grid_size"] != [1, 1] and len(matmuls) > 2:
            problems.append("9: more than two matmuls on a grid other than [1, 1]")
        if any(key.endswith("_tms") and "transpose" in value for key, value in op.items()):
            problems.append("unsupported 11: transpose TM on a fused op input")
        contracted: set[str] = set()
        for index, schedule in enumerate(schedules):
            consumes = any(name in contracted for sub in schedule for name in sub["inputs"])
            if index and schedule[-1]["type"] not in CONTRACTING and not consumes:
                problems.append("7: a schedule that neither ends with nor consumes a matmul/reduce")
            for k, sub in enumerate(schedule):
                if sub["type"] in CONTRACTING and k != len(schedule) - 1:
                    problems.append("7: a matmul/reduce that is not last in its schedule")
                if any(key.endswith("_tms") and "transpose" in value for key, value in sub.items()):
                    problems.append("unsupported 11: transpose TM inside a fused op")
                reads = sub["inputs"].count("dest")
                if reads and (k == 0 or schedule[k - 1]["output"] != "dest"):
                    problems.append("6: dest read without being written just before in this schedule")
                if reads and sub["type"] in (*CONTRACTING, "maximum"):
                    problems.append("4/5: dest into a matmul, reduce or maximum")
                if reads and arch == "grayskull" and sub["inputs"].index("dest") != 0:
                    problems.append("3: dest as input 1 on grayskull")
                if reads > 1:
                    problems.append("2: dest read twice")
                if sub["output"] == "dest":
                    nxt = schedule[k + 1] if k + 1 < len(schedule) else None
                    if sub["type"] in CONTRACTING or nxt is None or "dest" not in nxt["inputs"]:
                        problems.append("2/6: dest written but not read by the next sub-op of its schedule")
                if sub["type"] in CONTRACTING:
                    contracted.add(sub["output"])
    return problems


def _emit(function: Any, shapes: dict[str, tuple[int, int]], arch: str = "wormhole_b0") -> ng.Artifact:
    return ng.emit_artifact(ng.tile(function, shapes, target=WORMHOLE_B0), backend="buda", arch=arch)


def _check_numbers(artifact: ng.Artifact, program: ng.Program, rng: np.random.Generator) -> None:
    inputs = {p.name: rng.standard_normal(p.shape) for p in program.params}
    got = run_netlist(artifact, inputs)["output"]
    np.testing.assert_allclose(got, ng.interpret(program, **inputs), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ["wormhole_b0", "grayskull"])
@pytest.mark.parametrize("tiling", [WORMHOLE_B0, TRN2], ids=["tiled_wormhole", "tiled_trn2"])
@pytest.mark.parametrize("name", [*CASES, *MORE_CASES])
def test_every_emitted_fused_op_follows_the_seed_rules(name: str, tiling: ng.Target, arch: str) -> None:
    case = {**CASES, **MORE_CASES}[name]
    artifact = ng.emit_artifact(case.program(tiling), backend="buda", arch=arch)
    assert seed_rule_problems(artifact.parsed) == []


def test_the_independent_reading_catches_a_dest_into_a_matmul() -> None:
    artifact = _emit(CASES["double_matmul"].function, CASES["double_matmul"].shapes)
    parsed = artifact.parsed
    (fused,) = parsed["fused_ops"].values()
    second = next(iter(fused["schedules"][1][0].values()))
    second["inputs"][0] = "dest"
    assert any(p.startswith("4/5") for p in seed_rule_problems(parsed))


def _add_chain(n: int) -> Any:
    names = [f"p{i}" for i in range(n)]
    source = f"def chain({', '.join(names)}):\n    acc = p0\n"
    source += "".join(f"    acc = ng.tensor_tensor(acc, p{i}, op='add')\n" for i in range(1, n))
    namespace: dict[str, Any] = {"ng": ng}
    exec(source + "    return acc\n", namespace)
    return namespace["chain"]


@pytest.mark.parametrize("arch", ["wormhole_b0", "grayskull"])
def test_a_chain_with_more_inputs_than_a_fused_op_takes_makes_two_fused_ops(
    arch: str, rng: np.random.Generator
) -> None:
    function = _add_chain(20)
    program = ng.tile(function, {f"p{i}": (64, 64) for i in range(20)}, target=WORMHOLE_B0)
    artifact = ng.emit_artifact(program, backend="buda", arch=arch)
    assert (artifact.facts["ops"], artifact.facts["fused_ops"]) == (2, 2)
    assert list(artifact.facts["fusion_splits"].values()) == [["limits.inputs"]]
    assert all(fused["inputs"] <= 16 for _, fused in _fused_ops(artifact.parsed))
    _check_numbers(artifact, program, rng)


def test_a_long_unary_chain_fits_one_fused_op_through_dest() -> None:
    def chain(x: Any) -> Any:
        for op in ("exp", "tanh", "sigmoid", "square", "sqrt", "abs", "negative", "copy") * 4:
            x = ng.activation(x, op=op)
        return x

    artifact = _emit(chain, {"x": (64, 64)})
    ((_, fused),) = _fused_ops(artifact.parsed)
    subs = _subs(fused["schedules"][0])
    assert len(fused["schedules"]) == 1 and fused["intermediates"] == 0
    assert [s["output"] for s in subs] == ["dest"] * (len(subs) - 1) + ["output"]


def _exp_then(op: str) -> Any:
    def function(x: Any, y: Any) -> Any:
        return ng.tensor_tensor(x, ng.activation(y, op="exp"), op=op)

    return function


@pytest.mark.parametrize(
    ("op", "arch", "inputs"),
    [
        ("add", "wormhole_b0", ["input1", "dest"]),  # input0 is y, read first by exp
        ("add", "grayskull", ["dest", "input1"]),  # commutative: swapped so dest is input 0 (rule 3)
        ("subtract", "wormhole_b0", ["input1", "dest"]),
        ("subtract", "grayskull", ["input1", "intermed0"]),
    ],
)
def test_dest_is_never_input_1_on_grayskull(
    op: str, arch: str, inputs: list[str], rng: np.random.Generator
) -> None:
    program = ng.tile(_exp_then(op), {"x": (64, 64), "y": (64, 64)}, target=WORMHOLE_B0)
    artifact = ng.emit_artifact(program, backend="buda", arch=arch)
    ((_, fused),) = _fused_ops(artifact.parsed)
    assert _subs(fused["schedules"][0])[-1]["inputs"] == inputs
    _check_numbers(artifact, program, rng)


def test_a_forked_result_goes_to_an_intermediate_not_dest(rng: np.random.Generator) -> None:
    def fork(a: Any, b: Any) -> Any:
        h = ng.activation(a, op="exp")
        return ng.tensor_tensor(ng.tensor_tensor(h, b, op="multiply"), h, op="add")

    artifact = _emit(fork, {"a": (64, 96), "b": (64, 96)})
    ((_, fused),) = _fused_ops(artifact.parsed)
    exp, multiply, add = _subs(fused["schedules"][0])
    assert exp["output"] == "intermed0"
    assert multiply["inputs"] == ["intermed0", "input1"] and "pop" not in multiply
    assert add["inputs"] == ["dest", "intermed0"] and add["pop"] == ["intermed0"]


def test_maximum_neither_reads_nor_writes_dest() -> None:
    def clamp(a: Any, b: Any) -> Any:
        return ng.tensor_scalar(ng.tensor_tensor(ng.activation(a, op="exp"), b, op="maximum"), 0.5, op="add")

    artifact = _emit(clamp, {"a": (64, 64), "b": (64, 64)})
    ((_, fused),) = _fused_ops(artifact.parsed)
    exp, maximum, add = _subs(fused["schedules"][0])
    assert exp["output"] != "dest" and "dest" not in maximum["inputs"] and maximum["output"] != "dest"
    assert add["type"] == "add"


def test_a_matmul_with_m_k_above_1_writes_an_intermediate_then_a_copy_writes_output(
    rng: np.random.Generator,
) -> None:
    shapes = {"a": (128, 64), "b": (128, 256), "c": (256, 32)}  # inner dim of the 2nd matmul: 8 tiles
    program = ng.tile(CASES["double_matmul"].function, shapes, target=WORMHOLE_B0)
    artifact = ng.emit_artifact(program, backend="buda")
    ((_, fused),) = _fused_ops(artifact.parsed)
    _, second, last = (_subs(s) for s in fused["schedules"])
    assert second[0]["type"] == "matmul" and second[0]["attributes"]["m_k"] == 2
    assert second[0]["output"].startswith("intermed")
    assert [(s["type"], s["inputs"], s["output"]) for s in last] == [
        ("datacopy", [second[0]["output"]], "output")
    ]
    _check_numbers(artifact, program, rng)


def test_an_intermediate_matmul_input_1_is_popped_last_and_runs_on_one_core() -> None:
    # a.T @ (b.T @ c) with b.T @ c one tile tall: it fits one [1, 1] mblock (rule 14), is read
    # again for every mblock row of the second matmul, and each core would hold only its rows.
    artifact = ng.emit_artifact(MORE_CASES["double_matmul_moving_fused"].program(WORMHOLE_B0), backend="buda")
    ((op, fused),) = _fused_ops(artifact.parsed)
    first, second = (_subs(s) for s in fused["schedules"])
    assert op["grid_size"] == [1, 1]
    assert first[0]["output"] == "intermed0" and first[0]["mblock"] == [1, 1]
    assert second[0]["inputs"] == ["input2", "intermed0"] and second[0]["pop_last"] == ["intermed0"]
    assert second[0]["mblock"][0] > 1


def test_a_matmul_input_1_from_an_intermediate_wider_than_one_mblock_is_not_fused() -> None:
    artifact = ng.emit_artifact(MORE_CASES["double_matmul_moving"].program(WORMHOLE_B0), backend="buda")
    assert (artifact.facts["ops"], artifact.facts["fused_ops"]) == (2, 0)
    assert list(artifact.facts["fusion_splits"].values()) == [["matmul.14"]]


def test_a_computed_operand_read_transposed_gets_a_transpose_tm_on_a_plain_op() -> None:
    case = MORE_CASES["double_matmul_stationary"]
    artifact = ng.emit_artifact(case.program(WORMHOLE_B0), backend="buda")
    ops = artifact.parsed["graphs"]["double_matmul_stationary"]
    with_tm = [op for op in ops.values() if op.get("input_0_tms") == ["transpose"]]
    assert [op["type"] for op in with_tm] == ["matmul"]


def test_a_transposed_operand_of_a_multi_op_lowering_is_copied_out_first(rng: np.random.Generator) -> None:
    def transposed_rsqrt(a: Any, b: Any) -> Any:
        return ng.activation(ng.nc_transpose(ng.activation(ng.nc_matmul(a, b), op="abs")), op="rsqrt")

    program = ng.tile(transposed_rsqrt, {"a": (64, 64), "b": (64, 96)}, target=WORMHOLE_B0)
    artifact = ng.emit_artifact(program, backend="buda")
    ops = artifact.parsed["graphs"]["transposed_rsqrt"]
    copies = [name for name, op in ops.items() if op.get("input_0_tms") == ["transpose"]]
    assert len(copies) == 1 and ops[copies[0]]["type"] == "datacopy"
    assert seed_rule_problems(artifact.parsed) == []
    _check_numbers(artifact, program, rng)
