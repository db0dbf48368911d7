"""Graph-level checks: tile counts between ops and queues (after TMs), matmul inner dims,
unknown TMs, cycles, input counts and programs -- each a violation naming the op, the
input, the rule and the numbers -- and malformed sizes refused at load."""

from __future__ import annotations

import numpy as np
import pytest
from buda.builders import fused_netlist, graph_netlist, graph_op, queue, sub

from nkigym_graph.buda import NetlistError, NetlistEvaluationError, check_netlist, evaluate_netlist
from nkigym_graph.buda.numerics import apply_tms
from nkigym_graph.buda.tms import TM_SHAPES, Tm, tms_shape

HOSTS = [queue("a", "HOST", 0), queue("b", "HOST", 1)]
"""Two one-tile host queues."""


def one_violation(text: str) -> tuple[str, str]:
    """The rule and message of the only violation of ``text`` (at any severity)."""
    found = check_netlist(text, min_severity="info")
    assert len(found) == 1, [str(v) for v in found]
    return found[0].rule, found[0].message


def matmul(m_k: int, u_kt: int, b_tms: str = "", b_mblock: tuple[int, int] = (2, 1)) -> str:
    """[1 x 2 tiles] @ [2 x 1 tiles] -> one tile, with these m_k and u_kt."""
    queues = [
        queue("a", "HOST", 0, mblock=(1, 2)),
        queue("b", "HOST", 1, mblock=b_mblock),
        queue("out", "mm", 2),
    ]
    attributes = f", attributes: {{m_k: {m_k}, u_kt: {u_kt}}}{b_tms}"
    return graph_netlist(queues, [graph_op("mm", "matmul", ["a", "b"], extra=attributes)])


def test_a_matmul_inner_dim_is_m_k_times_u_kt_tiles() -> None:
    assert check_netlist(matmul(2, 1), min_severity="info") == []
    assert check_netlist(matmul(1, 2), min_severity="info") == []
    found = check_netlist(matmul(3, 1), min_severity="warning")
    assert [v.rule for v in found] == ["shapes.matmul_inner", "shapes.matmul_inner"]
    assert found[0].graph_op == "mm"
    assert found[0].message == (
        "op 'mm': input 0 ('a') has 2 tile columns after its TMs, but m_k * u_kt = 3 * 1 = 3 tiles"
    )
    assert found[1].message == (
        "op 'mm': input 1 ('b') has 2 tile rows after its TMs, but m_k * u_kt = 3 * 1 = 3 tiles"
    )


def test_a_matmul_inner_dim_counts_the_input_tms() -> None:
    transposed = matmul(2, 1, b_tms=", input_1_tms: [transpose]", b_mblock=(1, 2))
    assert check_netlist(transposed, min_severity="info") == []
    rule, message = one_violation(matmul(2, 1, b_tms=", input_1_tms: [broadcast: {r: 2}]"))
    assert rule == "shapes.matmul_inner" and "input 1 ('b') has 4 tile rows after its TMs" in message


def test_a_matmul_without_m_k_and_u_kt_is_named() -> None:
    text = matmul(2, 1).replace(", attributes: {m_k: 2, u_kt: 1}", "")
    assert one_violation(text) == (
        "shapes.matmul_inner",
        "op 'mm': a matmul needs attributes m_k and u_kt (its inner dim in tiles), missing m_k, u_kt",
    )


def test_an_output_queue_holds_what_its_op_writes() -> None:
    ops = [graph_op("op", "add", ["a", "b"])]
    assert check_netlist(graph_netlist([*HOSTS, queue("out", "op", 2)], ops), min_severity="info") == []
    wide = graph_netlist([*HOSTS, queue("out", "op", 2, grid=(2, 1))], ops)
    assert one_violation(wide) == (
        "shapes.output_queue",
        "queue 'out' (grid_size [2, 1], t 1, mblock [1, 1], ublock [1, 1]) holds 2x1 tiles, t 1; "
        "op 'op' writes 1x1 tiles, t 1",
    )
    blocks = graph_netlist([*HOSTS, queue("out", "op", 2, ublock=(1, 2))], ops)
    assert one_violation(blocks)[0] == "shapes.output_queue"


def test_a_queue_s_input_tms_reshape_what_it_stores() -> None:
    op = graph_op("op", "exp", ["a"], mblock=(1, 2))
    a = queue("a", "HOST", 0, mblock=(1, 2))
    stored = queue("out", "op", 2, mblock=(2, 1), extra=", input_tms: [transpose]")
    assert check_netlist(graph_netlist([a, stored], [op]), min_severity="info") == []
    sliced = queue("out", "op", 2, t=2, extra=", input_tms: [hslice: 2]")
    assert check_netlist(graph_netlist([a, sliced], [op]), min_severity="info") == []


def test_an_op_input_gives_the_tiles_the_op_reads_after_its_tms() -> None:
    wide = [graph_op("op", "add", ["a", "b"], mblock=(2, 1))]
    out = queue("out", "op", 2, mblock=(2, 1))
    found = check_netlist(graph_netlist([*HOSTS, out], wide), min_severity="warning")
    assert [(v.rule, v.graph_op) for v in found] == [("shapes.inputs", "op")] * 2  # inputs 0 and 1
    assert found[0].message == (
        "op 'op' input 0 ('a') gives 1x1 tiles, t 1 after its TMs; add reads 2x1 tiles, t 1 (the op's output)"
    )
    broadcast = ", input_0_tms: [broadcast: {r: 2}], input_1_tms: [broadcast: {r: 2}]"
    fixed = graph_op("op", "add", ["a", "b"], mblock=(2, 1), extra=broadcast)
    assert check_netlist(graph_netlist([*HOSTS, out], [fixed]), min_severity="info") == []


def test_a_matmul_s_outer_dims_and_t_are_checked() -> None:
    queues = [
        queue("a", "HOST", 0, mblock=(2, 1)),
        queue("b", "HOST", 1, mblock=(1, 1), t=2),
        queue("out", "mm", 2, mblock=(2, 1)),
    ]
    op = graph_op("mm", "matmul", ["a", "b"], mblock=(2, 1), extra=", attributes: {m_k: 1, u_kt: 1}")
    rule, message = one_violation(graph_netlist(queues, [op]))
    assert rule == "shapes.inputs"
    assert message == (
        "op 'mm' input 1 ('b') gives 1x1 tiles, t 2 after its TMs; matmul reads ?x1 tiles, t 1 "
        "(the op's output columns)"
    )


def test_a_tm_that_cannot_apply_is_named() -> None:
    op = graph_op("op", "exp", ["a"], extra=", input_0_tms: [hslice: 3]")
    rule, message = one_violation(graph_netlist([queue("a", "HOST", 0), queue("out", "op", 2)], [op]))
    assert rule == "shapes.inputs"
    assert message == "op 'op' input 0 ('a'): hslice 3 needs tile columns a multiple of 3, got 1"


@pytest.mark.parametrize("padding", [", input_0_tms: [pad: [1, 0, 0.0]]", ", input_0_unpad: {rt: 1, ct: 0}"])
def test_padding_is_known_but_its_shape_is_not_compared(padding: str) -> None:
    op = graph_op("op", "exp", ["a"], mblock=(2, 1), extra=padding)
    text = graph_netlist([queue("a", "HOST", 0), queue("out", "op", 2, mblock=(2, 1))], [op])
    assert check_netlist(text, min_severity="info") == []


def test_reduce_reads_any_count_along_its_dim() -> None:
    ops = [graph_op("op", "reduce", ["a"], t=3, mblock=(1, 3), extra=", attributes: {dim: r, type: max}")]
    queues = [queue("a", "HOST", 0, t=3, mblock=(2, 3)), queue("out", "op", 2, t=3, mblock=(1, 3))]
    assert check_netlist(graph_netlist(queues, ops), min_severity="info") == []
    queues[0] = queue("a", "HOST", 0, t=3, mblock=(2, 2))
    assert one_violation(graph_netlist(queues, ops))[0] == "shapes.inputs"


def test_unknown_tms_are_named_with_the_known_ones() -> None:
    known = "broadcast, hslice, hstack, pad, tile_broadcast, transpose, vslice, vstack"
    op = graph_op("op", "add", ["a", "b"], extra=", input_0_tms: [frobnicate: 2]")
    found = check_netlist(graph_netlist([*HOSTS, queue("out", "op", 2)], [op]))
    assert [(v.rule, v.graph_op) for v in found] == [("tms.unknown", "op")]
    assert found[0].message == f"op 'op' input 0 ('a'): unknown TM 'frobnicate'; known TMs: {known}"
    stored = queue("out", "op", 2, extra=", input_tms: [frobnicate]")
    rule, message = one_violation(graph_netlist([*HOSTS, stored], [graph_op("op", "add", ["a", "b"])]))
    assert (rule, message) == (
        "tms.unknown",
        f"queue 'out' input_tms: unknown TM 'frobnicate'; known TMs: {known}",
    )


def test_unknown_tms_of_a_sub_op_are_named() -> None:
    bad = sub("a", "add", ["input0", "input1"], "output", input_1_tms="[frobnicate: 1]")
    (violation,) = check_netlist(fused_netlist([[bad]]))
    assert (violation.rule, violation.fused_op, violation.schedule, violation.sub_op) == (
        "tms.unknown",
        "0",
        0,
        "a",
    )
    assert "input 1 ('input1'): unknown TM 'frobnicate'; known TMs: broadcast" in violation.message


FIDELITIES = "LoFi, HiFi2, HiFi3, HiFi4, HiFi2_A, HiFi2_B"


@pytest.mark.parametrize("fidelity", ["HiFi9", "hifi4", "'5'"])
def test_an_unknown_math_fidelity_is_an_error_naming_the_op(fidelity: str) -> None:
    """The backend's parser refuses a fidelity it does not know; the checker used to say nothing."""
    ops = [graph_op("op", "exp", ["a"]).replace("math_fidelity: HiFi4", f"math_fidelity: {fidelity}")]
    (violation,) = check_netlist(graph_netlist([queue("a", "HOST", 0), queue("out", "op", 2)], ops))
    shown = fidelity.strip("'")
    assert (violation.rule, violation.severity, violation.graph_op) == ("ops.math_fidelity", "error", "op")
    assert violation.message == f"op 'op': unknown math_fidelity '{shown}'; known: {FIDELITIES}"


@pytest.mark.parametrize("fidelity", ["LoFi", "HiFi2", "HiFi3", "HiFi4", "HiFi2_A", "HiFi2_B"])
def test_every_fidelity_the_backend_knows_is_accepted(fidelity: str) -> None:
    ops = [graph_op("op", "exp", ["a"]).replace("math_fidelity: HiFi4", f"math_fidelity: {fidelity}")]
    text = graph_netlist([queue("a", "HOST", 0), queue("out", "op", 2)], ops)
    assert check_netlist(text, min_severity="info") == []


EXP = graph_netlist([queue("a", "HOST", 0), queue("out", "op", 2)], [graph_op("op", "exp", ["a"])])


@pytest.mark.parametrize("arch", [None, "wormhole_b0", "grayskull"])
@pytest.mark.parametrize(
    ("devices", "unknown"), [("wormhole_c9", "'wormhole_c9'"), ("[grayskull, 5]", "'5'")]
)
def test_an_unknown_devices_arch_is_an_error_naming_it(devices: str, unknown: str, arch: str | None) -> None:
    """The backend's parser refuses an architecture it does not know; the checker used to
    say nothing when given ``arch=``, and to raise instead of reporting it otherwise."""
    text = EXP.replace("devices: {arch: wormhole_b0}", f"devices: {{arch: {devices}}}")
    (violation,) = check_netlist(text, arch)
    assert (violation.rule, violation.severity) == ("devices.arch", "error")
    assert violation.message == (
        f"devices.arch: unknown architecture {unknown}; known: grayskull, wormhole, wormhole_b0, blackhole"
    )


@pytest.mark.parametrize("arch", [None, "grayskull"])
@pytest.mark.parametrize(("devices", "shown"), [("null", "null"), ("~", "null"), ("[]", "[]")])
def test_an_arch_naming_no_architecture_is_an_error(devices: str, shown: str, arch: str | None) -> None:
    """The backend reads a null arch as the name "null" and refuses it, and refuses an empty
    list (the run's ARCH_NAME is never among its names); the checker used to fall back to
    wormhole_b0 and pass it."""
    text = EXP.replace("devices: {arch: wormhole_b0}", f"devices: {{arch: {devices}}}")
    found = [(v.rule, v.severity, v.message) for v in check_netlist(text, arch, min_severity="info")]
    known = "grayskull, wormhole, wormhole_b0, blackhole"
    message = f"devices.arch: arch is {shown}, which names no architecture; known: {known}"
    assert found == [("devices.arch", "error", message)]


@pytest.mark.parametrize("arch", [None, "grayskull"])
def test_a_devices_field_other_than_arch_is_an_error_naming_it(arch: str | None) -> None:
    """The backend's parser refuses every devices field but arch ("Field ... is not supported
    for tt_device_info settings"); the checker used to pass them silently."""
    text = EXP.replace("devices: {arch: wormhole_b0}", "devices: {arch: wormhole_b0, chips: 2, harvest: 1}")
    found = [(v.rule, v.severity, v.message) for v in check_netlist(text, arch, min_severity="info")]
    refused = "is not supported (the backend reads only arch)"
    assert found == [
        ("devices.fields", "error", f"devices: field '{field}' {refused}") for field in ("chips", "harvest")
    ]
    listed = EXP.replace("devices: {arch: wormhole_b0}", "devices: [arch, wormhole_b0]")
    (violation,) = check_netlist(listed, arch)
    assert violation.message == "devices must be a map with the field arch, got a list"


def test_the_pre_b0_wormhole_is_a_known_architecture() -> None:
    """``wormhole`` is the backend's ``ARCH::WORMHOLE`` (its parser reads it), checked with
    the Wormhole B0 facts."""
    assert check_netlist(EXP.replace("arch: wormhole_b0", "arch: wormhole"), min_severity="info") == []


def test_ops_in_a_cycle_are_named() -> None:
    ops = [graph_op("op1", "exp", ["op2"]), graph_op("op2", "exp", ["op1"], grid_loc=(0, 1))]
    rule, message = one_violation(graph_netlist([queue("out", "op2", 2)], ops))
    assert (rule, message) == ("graph.cycle", "graph 'g': ops op1 -> op2 -> op1 form a cycle")


def test_a_graph_op_has_as_many_inputs_as_its_type_takes() -> None:
    ops = [graph_op("op", "add", ["a"])]
    assert one_violation(graph_netlist([*HOSTS, queue("out", "op", 2)], ops)) == (
        "ops.graph_arity",
        "op 'op': add takes 2 input(s), got 1",
    )
    ops = [graph_op("op", "exp", ["a", "b"])]
    assert one_violation(graph_netlist([*HOSTS, queue("out", "op", 2)], ops))[0] == "ops.graph_arity"
    bias = ", attributes: {m_k: 1, u_kt: 1, bias: true}, input_2_tms: [broadcast: {r: 1}]"
    with_bias = [graph_op("mm", "matmul", ["a", "b", "a"], extra=bias)]
    assert check_netlist(graph_netlist([*HOSTS, queue("out", "mm", 2)], with_bias), min_severity="info") == []


@pytest.mark.parametrize(
    ("program", "message"),
    [
        (
            "  - run: [{execute: {graph_name: nope}}]\n",
            "program 'run', instruction 0 executes graph 'nope', which is not defined; graphs: g",
        ),
        ("  - 5\n", "programs: each program is a one-key map, got 5"),
        ("  - run: [{execute: [1]}]\n", "program 'run', instruction 0: execute needs a graph_name"),
    ],
)
def test_programs_execute_graphs_the_netlist_defines(program: str, message: str) -> None:
    text = graph_netlist([*HOSTS, queue("out", "op", 2)], [graph_op("op", "add", ["a", "b"])])
    text = text.replace("  - run: [{execute: {graph_name: g}}]\n", program)
    assert one_violation(text) == ("graph.program_graphs", message)


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ("{m_k: -1, u_kt: 1}", "op 'mm' field 'attributes': -1 is outside 1..1024 \\(NetlistLimits.block\\)"),
        ("{m_k: 2, u_kt: 0}", "op 'mm' field 'attributes': 0 is outside 1..1024"),
        ("{m_k: x, u_kt: 1}", "op 'mm', attributes field 'm_k': must be an integer, got 'x'"),
    ],
)
def test_a_graph_matmul_s_m_k_and_u_kt_are_sizes(attributes: str, message: str) -> None:
    with pytest.raises(NetlistError, match=message):
        check_netlist(matmul(2, 1).replace("{m_k: 2, u_kt: 1}", attributes))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("entries: 1", "entries: -5", "queue 'a' field 'entries': must be an integer >= 0, got -5"),
        (
            "[[0, 0x10000000]]",
            "[[0, -16]]",
            "queue 'a' field 'dram': entry \\[0, -16\\] is not a \\[channel, address\\]",
        ),
        (
            "[[0, 0x10000000]]",
            "[[-1, 0x10000000]]",
            "queue 'a' field 'dram': entry \\[-1, 268435456\\] is not",
        ),
    ],
)
def test_negative_queue_sizes_are_refused(old: str, new: str, message: str) -> None:
    text = graph_netlist([*HOSTS, queue("out", "op", 2)], [graph_op("op", "add", ["a", "b"])])
    with pytest.raises(NetlistError, match=message):
        check_netlist(text.replace(old, new, 1))


@pytest.mark.parametrize("name", ["hslice", "vstack", "broadcast", "tile_broadcast"])
def test_a_tm_that_needs_an_argument_is_refused_without_one(name: str) -> None:
    op = graph_op("op", "exp", ["a"], extra=f", input_0_tms: [{name}]")
    with pytest.raises(NetlistError, match=f"input_0_tms: {name} needs an argument, e.g. {name}: "):
        check_netlist(graph_netlist([queue("a", "HOST", 0), queue("out", "op", 2)], [op]))


def test_a_relu_threshold_that_is_no_number_is_an_evaluation_error() -> None:
    extra = ", attributes: {relu_en: true, relu_threshold: x}"
    text = graph_netlist(
        [queue("a", "HOST", 0), queue("out", "op", 2)], [graph_op("op", "exp", ["a"], extra=extra)]
    )
    with pytest.raises(NetlistEvaluationError, match="op 'op': could not convert string to float: 'x'"):
        evaluate_netlist(text, {"a": np.ones((32, 32))})


@pytest.mark.parametrize(
    "tm",
    [
        Tm("broadcast", "r", 2),
        Tm("broadcast", "c", 3),
        Tm("broadcast", "z", 2),
        Tm("tile_broadcast", "c"),
        Tm("transpose"),
        Tm("hslice", factor=2),
        Tm("hstack", factor=2),
        Tm("vslice", factor=2),
        Tm("vstack", factor=2),
    ],
    ids=str,
)
def test_tm_shapes_match_what_the_evaluator_makes(tm: Tm) -> None:
    x = np.zeros((4, 4 * 32, 6 * 32))
    t, rows, cols = apply_tms(x, (tm,)).shape
    assert tms_shape((4, 4, 6), (tm,)) == (t, rows // 32, cols // 32)
    assert tm.name in TM_SHAPES
