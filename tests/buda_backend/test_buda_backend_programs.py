"""Emitted netlists pass the checker, re-parse, and compute what the program computes."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from buda_backend.programs import CASES, MORE_CASES, Case

import nkigym_graph as ng
from nkigym_graph.ir.targets import TRN2, WORMHOLE_B0, Target
from nkigym_graph_plugins.buda_backend import netlist_inputs, program_outputs

ARCHS = ["wormhole_b0", "grayskull"]
TILINGS = {"tiled_wormhole": WORMHOLE_B0, "tiled_trn2": TRN2}


def _emit_and_compare(case: Case, tiling: Target, arch: str, rng: np.random.Generator) -> ng.Artifact:
    program = case.program(tiling)
    artifact = ng.emit_artifact(program, backend="buda", arch=arch)
    assert ng.check_netlist(artifact.parsed) == []
    assert ng.check_netlist(artifact.text, arch=arch) == []
    assert yaml.safe_load(artifact.text) == artifact.parsed
    inputs = case.inputs(rng)
    queues = ng.evaluate_netlist(artifact.parsed, netlist_inputs(artifact, inputs))
    got = program_outputs(artifact, queues)["output"]
    expected = ng.interpret(program, **inputs)
    assert got.shape == expected.shape
    assert np.abs(expected).max() > 0.1
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    return artifact


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("tiling", TILINGS.values(), ids=TILINGS.keys())
@pytest.mark.parametrize("name", CASES)
def test_required_programs_emit_checked_netlists_that_match_the_interpreter(
    name: str, tiling: Target, arch: str, rng: np.random.Generator
) -> None:
    artifact = _emit_and_compare(CASES[name], tiling, arch, rng)
    assert artifact.parsed["devices"] == {"arch": arch}
    assert artifact.suffix == ".yaml"


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", MORE_CASES)
def test_other_operand_roles_and_shapes(name: str, arch: str, rng: np.random.Generator) -> None:
    _emit_and_compare(MORE_CASES[name], WORMHOLE_B0, arch, rng)


def _schedule_shapes(artifact: ng.Artifact) -> list[list[list[tuple[str, list[str], str]]]]:
    """Sub-op types, operands and outputs of every fused op (blocks left out)."""
    return [
        [
            [(s["type"], s["inputs"], s["output"]) for entry in sch for s in entry.values()]
            for sch in f["schedules"]
        ]
        for f in artifact.parsed.get("fused_ops", {}).values()
    ]


def test_a_rewritten_program_emits_the_same_netlist_structure(rng: np.random.Generator) -> None:
    case = CASES["matmul_bias_relu"]
    program = case.program(WORMHOLE_B0)
    rewritten = ng.saturate(program, ["data_reuse", "operand_merge", "free_dim_merge", "dead_code"])
    assert len(rewritten) < len(program)
    before = ng.emit_artifact(program, backend="buda", arch="wormhole_b0")
    after = ng.emit_artifact(rewritten, backend="buda", arch="wormhole_b0")
    assert _schedule_shapes(after) == _schedule_shapes(before)
    assert after.facts["ops"] == before.facts["ops"]
    inputs = case.inputs(rng)
    got = program_outputs(after, ng.evaluate_netlist(after.parsed, netlist_inputs(after, inputs)))["output"]
    np.testing.assert_allclose(got, ng.interpret(program, **inputs), rtol=1e-5, atol=1e-5)


def test_matmul_is_one_matmul_op_with_its_stationary_operand_transposed_by_the_host() -> None:
    artifact = ng.emit_artifact(CASES["matmul"].program(WORMHOLE_B0), backend="buda")
    (ops,) = artifact.parsed["graphs"].values()
    (op,) = ops.values()
    assert op["type"] == "matmul" and op["inputs"] == ["a_t", "b"]
    assert op["attributes"]["m_k"] * op["attributes"]["u_kt"] == 128 // 32
    assert op["grid_size"] == [2, 3]  # one core per 32x32 program tile of the 64x96 result
    assert artifact.facts["host_queues"]["a_t"] == {"param": "a", "transposed": True}
    assert "transposed by the host" in artifact.text


def test_trn2_tiles_give_fewer_cores_and_larger_blocks() -> None:
    program = CASES["matmul"].program(TRN2)  # 128-row tiles: one tile covers the 64x96 result
    op = next(iter(ng.emit_artifact(program, backend="buda").parsed["graphs"]["matmul"].values()))
    assert op["grid_size"] == [1, 1]
    assert op["mblock"][0] * op["ublock"][0] == 2 and op["mblock"][1] * op["ublock"][1] == 3


def test_matmul_bias_relu_is_one_fused_op_with_a_schedule_per_matmul() -> None:
    artifact = ng.emit_artifact(CASES["matmul_bias_relu"].program(WORMHOLE_B0), backend="buda")
    assert (artifact.facts["ops"], artifact.facts["fused_ops"]) == (1, 1)
    (fused,) = artifact.parsed["fused_ops"].values()
    first, second = fused["schedules"]
    ((_, matmul),) = first[0].items()
    ((_, add),) = second[0].items()
    assert matmul["type"] == "matmul" and matmul["output"] == "intermed0"
    assert add["type"] == "add" and add["attributes"] == {"relu_en": True}
    assert add["inputs"][0] == "intermed0" and add["pop"] == ["intermed0"] and add["output"] == "output"


def test_double_matmul_fuses_both_matmuls() -> None:
    artifact = ng.emit_artifact(CASES["double_matmul"].program(WORMHOLE_B0), backend="buda")
    (fused,) = artifact.parsed["fused_ops"].values()
    kinds = [[next(iter(sub.values()))["type"] for sub in schedule] for schedule in fused["schedules"]]
    assert kinds[:2] == [["matmul"], ["matmul"]]


def test_layernorm_like_chain_is_fused_with_dest_reuse() -> None:
    artifact = ng.emit_artifact(CASES["layernorm_like"].program(WORMHOLE_B0), backend="buda")
    # 4 matmuls (two row sums, two spreads) run on one core; the 2x4-tile centred rows then
    # need a [2, 1] mblock, which may not cross schedules (seed 004 unsupported 6): two fused ops.
    assert artifact.facts["fused_ops"] == artifact.facts["ops"] == 2
    assert list(artifact.facts["fusion_splits"].values()) == [["unsupported.6"]]
    subs = [s for fused in artifact.parsed["fused_ops"].values() for sch in fused["schedules"] for s in sch]
    outputs = [next(iter(s.values()))["output"] for s in subs]
    assert outputs.count("dest") >= 2
    kinds = {h.get("constant") for h in artifact.facts["host_queues"].values()}
    assert kinds == {None, "fill", "column_ones"}


def test_program_and_queue_sections() -> None:
    artifact = ng.emit_artifact(CASES["matmul_bias_relu"].program(WORMHOLE_B0), backend="buda")
    parsed = artifact.parsed
    ((program_name, body),) = parsed["programs"][0].items()
    assert program_name == "run_matmul_bias_relu"
    opcodes = [item if isinstance(item, str) else next(iter(item)) for item in body]
    assert opcodes == ["var", "staticvar", "loop", "execute", "varinst", "varinst", "endloop"]
    execute = body[3]["execute"]
    assert execute["graph_name"] == "matmul_bias_relu"
    assert set(execute["queue_settings"]) == {"a_t", "b", "bias"}
    output = parsed["queues"]["output"]
    op = parsed["graphs"]["matmul_bias_relu"][output["input"]]
    assert output["grid_size"] == op["grid_size"] and len(output["dram"]) == 2
    assert "0x10000000" in artifact.text


def test_facts_count_ops_and_circular_buffers() -> None:
    artifact = ng.emit_artifact(CASES["layernorm_like"].program(WORMHOLE_B0), backend="buda")
    facts = artifact.facts
    assert facts["arch"] == "wormhole_b0" and facts["graph"] == "layernorm_like"
    assert facts["queues"] == len(artifact.parsed["queues"])
    assert facts["sub_ops"] == sum(
        len(schedule) for fused in artifact.parsed["fused_ops"].values() for schedule in fused["schedules"]
    )
    if "circular_buffers" in facts:
        fused = artifact.parsed["fused_ops"].values()
        assert facts["circular_buffers"] == max(f["inputs"] + f["intermediates"] + 1 for f in fused)
        assert facts["circular_buffers_fit"]
    else:
        assert "circular_buffers_note" in facts


def test_arch_defaults_to_a_tenstorrent_program_target_else_wormhole_b0() -> None:
    program = CASES["matmul"].program(ng.GRAYSKULL)
    assert ng.emit_artifact(program, backend="buda").facts["arch"] == "grayskull"
    assert ng.emit_artifact(CASES["matmul"].program(TRN2), backend="buda").facts["arch"] == "wormhole_b0"
    assert ng.emit(program, backend="buda", arch="wormhole_b0").count("Float32") > 0
