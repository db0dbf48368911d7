"""Checker behaviour beyond the one-rule table: grids and NOCs, architectures, messages,
fused ops run by several graph ops, and the rule registry."""

from __future__ import annotations

import pytest
from buda.builders import fused_netlist, sub

from nkigym_graph.buda import RULES, NetlistError, check_netlist, rule_by_id, rules_table
from nkigym_graph.ir.targets import GRAYSKULL, TRN2


def mm(name: str, a: str, b: str, out: str, **fields: str) -> str:
    return sub(name, "matmul", [a, b], out, attributes="{m_k: 1, u_kt: 1}", **fields)


def rules_of(text: str, **kwargs: object) -> set[str]:
    """Rules reported at any severity."""
    return {v.rule for v in check_netlist(text, min_severity="info", **kwargs)}  # type: ignore[arg-type]


TWO_MATMULS = [
    [mm("m0", "input0", "input1", "intermed0")],
    [mm("m1", "intermed0", "input1", "intermed1", pop="[intermed0]")],
    [sub("d", "datacopy", ["intermed1"], "output", pop="[intermed1]")],
]


def test_a_matmul_on_a_row_grid_is_only_an_info_note() -> None:
    # general.8(1) asks for grid [m, 1]; the backend's CI runs a fused matmul on [1, 2].
    text = fused_netlist(TWO_MATMULS, grid=(1, 2), intermediates=2)
    (note,) = check_netlist(text, min_severity="info")
    assert (note.rule, note.severity, note.graph_op) == ("general.8", "info", "op0")
    assert check_netlist(text) == [] and check_netlist(text, strict=True) == []


def test_multicasts_not_matmuls_are_counted() -> None:
    # Every matmul reads the same fused-op input as input 1: one column multicast.
    assert check_netlist(fused_netlist(TWO_MATMULS, grid=(2, 1), intermediates=2), min_severity="info") == []
    three = [
        *TWO_MATMULS[:2],
        [mm("m2", "intermed1", "input1", "intermed0", pop="[intermed1]")],
        [sub("d", "datacopy", ["intermed0"], "output", pop="[intermed0]")],
    ]
    assert check_netlist(fused_netlist(three, grid=(2, 1), intermediates=2)) == []


def test_a_third_multicast_needs_a_third_noc() -> None:
    three = [
        [mm("m0", "input0", "input1", "intermed0")],
        [mm("m1", "intermed0", "input2", "intermed1", pop="[intermed0]")],
        [mm("m2", "intermed1", "input3", "intermed0", pop="[intermed1]")],
        [sub("d", "datacopy", ["intermed0"], "output", pop="[intermed0]")],
    ]
    violations = check_netlist(fused_netlist(three, inputs=4, grid=(2, 1), intermediates=2))
    assert [(v.rule, v.severity) for v in violations] == [("general.9", "error")]
    assert violations[0].graph_op == "op0" and violations[0].sub_op == "m2"
    assert "input1 (column), input2 (column), input3 (column)" in violations[0].message
    # on one core nothing is multicast; on a row of cores only input0 (as input 0) is
    assert check_netlist(fused_netlist(three, inputs=4, grid=(1, 1), intermediates=2)) == []
    assert check_netlist(fused_netlist(three, inputs=4, grid=(1, 2), intermediates=2)) == []


def test_input_0_multicasts_along_rows_and_input_1_down_columns() -> None:
    # On a 2x2 grid input0 (row) and input1, input2 (column) need three multicasts.
    two = [
        [mm("m0", "input0", "input1", "intermed0")],
        [mm("m1", "intermed0", "input2", "intermed1", pop="[intermed0]")],
        [sub("d", "datacopy", ["intermed1"], "output", pop="[intermed1]")],
    ]
    assert rules_of(fused_netlist(two, inputs=3, grid=(2, 2), intermediates=2)) == {"general.8", "general.9"}
    assert check_netlist(fused_netlist(two, inputs=3, grid=(2, 1), intermediates=2)) == []


def test_matmul_on_a_row_grid_is_noted_but_a_column_grid_is_silent() -> None:
    one = [[mm("m", "input0", "input1", "output")]]
    assert rules_of(fused_netlist(one, grid=(1, 3))) == {"general.8"}
    assert check_netlist(fused_netlist(one, grid=(3, 1)), min_severity="info") == []


ROW_BROADCAST = [
    [
        sub("a", "datacopy", ["input0"], "intermed0"),
        sub(
            "b",
            "datacopy",
            ["intermed0"],
            "output",
            (2, 1),
            pop="[intermed0]",
            input_0_tms="[broadcast: {r: 2}]",
        ),
    ]
]


def test_broadcast_dim_of_the_grid_is_a_warning() -> None:
    text = fused_netlist(ROW_BROADCAST, grid=(2, 1), mblock=(2, 1))
    assert [(v.rule, v.severity) for v in check_netlist(text, strict=True)] == [("general.8", "warning")]
    assert check_netlist(text) == []
    assert check_netlist(fused_netlist(ROW_BROADCAST, grid=(1, 2), mblock=(2, 1)), strict=True) == []


def test_forked_dest_names_every_reader() -> None:
    text = fused_netlist(
        [
            [
                sub("a", "datacopy", ["input0"], "dest"),
                sub("b", "add", ["dest", "input1"], "intermed0"),
                sub("c", "multiply", ["dest", "intermed0"], "output", pop="[intermed0]"),
            ]
        ]
    )
    assert check_netlist(text) == []  # general.2 is documented, checked by no backend code
    (violation,) = check_netlist(text, strict=True)
    assert (violation.rule, violation.severity) == ("general.2", "warning")
    assert (violation.fused_op, violation.schedule, violation.sub_op) == ("0", 0, "b")
    assert "fused op 0, schedule 0, sub-op 'b'" in violation.message
    assert "['b', 'c']" in violation.message


DEST_INPUT_1 = fused_netlist(
    [[sub("a", "datacopy", ["input0"], "dest"), sub("b", "add", ["input1", "dest"], "output")]],
    arch="[grayskull, wormhole_b0]",
)


def test_every_listed_architecture_is_checked() -> None:
    assert rules_of(DEST_INPUT_1) == {"general.3"}
    assert rules_of(DEST_INPUT_1, arch="wormhole_b0") == set()
    assert rules_of(DEST_INPUT_1, arch="wormhole") == set()
    assert rules_of(DEST_INPUT_1, arch=GRAYSKULL) == {"general.3"}
    assert rules_of(DEST_INPUT_1, arch="GraySkull") == {"general.3"}


def test_unknown_or_non_tenstorrent_architecture_is_an_error() -> None:
    with pytest.raises(NetlistError, match="unknown architecture 'trn9'"):
        check_netlist(DEST_INPUT_1, arch="trn9")
    with pytest.raises(NetlistError, match="not a Tenstorrent"):
        check_netlist(DEST_INPUT_1, arch=TRN2)


def test_grid_limits_come_from_the_target() -> None:
    # Grayskull has 12 worker columns, Wormhole B0 has 8.
    text = fused_netlist(
        [[sub("a", "datacopy", ["input0"], "output")]], grid_loc=(0, 9), arch="[grayskull, wormhole_b0]"
    )
    assert rules_of(text, arch="grayskull") == set()
    assert rules_of(text, arch="wormhole_b0") == {"graph.grid"}


def test_ignore_skips_rules_by_id_or_alias() -> None:
    assert rules_of(DEST_INPUT_1, ignore=["general.3"]) == set()
    with pytest.raises(NetlistError, match=r"no rule 'general.99'"):
        check_netlist(DEST_INPUT_1, ignore=["general.99"])


def test_fused_op_without_graph_op_is_still_checked() -> None:
    text = fused_netlist([[sub("a", "datacopy", ["input0"], "intermed0")]], fused_op_id=0)
    text = text.replace(
        "fused_ops:\n  0:",
        "fused_ops:\n  1:\n    inputs: 1\n    intermediates: 1\n"
        "    schedules:\n      - - x: {type: datacopy, inputs: [input0], mblock: [1, 1], "
        "ublock: [1, 1], output: intermed0}\n  0:",
    )
    violations = check_netlist(text)
    assert ("intermed.popped_at_end", "1") in {(v.rule, v.fused_op) for v in violations}


SECOND_OP = (
    "    op1: {{type: fused_op, grid_loc: [1, 0], grid_size: [1, 1], inputs: [in0, in1], t: 1, "
    "mblock: [1, 1], ublock: [1, 1], in_df: [Float16_b, Float16_b], acc_df: Float16_b, "
    "out_df: Float16_b, intermed_df: Float16_b, ublock_order: {order}, math_fidelity: {fidelity}, "
    "attributes: {{fused_op_id: 0}}}}\n"
)


@pytest.mark.parametrize(
    ("order", "fidelity", "expected"),
    [("r", "HiFi3", set()), ("c", "HiFi3", {"unsupported.8"}), ("r", "LoFi", {"unsupported.5"})],
)
def test_graph_ops_sharing_a_fused_op_agree(order: str, fidelity: str, expected: set[str]) -> None:
    text = fused_netlist(
        [[sub("a", "add", ["input0", "input1"], "output")]],
        extra_ops=SECOND_OP.format(order=order, fidelity=fidelity),
    )
    assert rules_of(text) == expected


def test_reduce_order_does_not_matter_for_one_column_of_ublocks() -> None:
    # unsupported.9: a reduce over r from an intermediate wants column-major ublocks, unless the
    # input mblock is a single row or column of ublocks (both orders read it the same way).
    text = fused_netlist(
        [
            [
                sub("a", "datacopy", ["input0"], "intermed0", (2, 1)),
                sub(
                    "r",
                    "reduce",
                    ["intermed0"],
                    "intermed1",
                    pop="[intermed0]",
                    attributes="{type: max, dim: r, m_k: 2, u_kt: 1}",
                ),
            ],
            [sub("d", "datacopy", ["intermed1"], "output", pop="[intermed1]")],
        ],
        intermediates=2,
    )
    assert check_netlist(text) == []


def test_layernorm_like_fused_op_with_reductions_and_broadcasts_passes() -> None:
    # The shape of a real add + reduce + broadcast-subtract fused op: two reductions in their
    # own schedules, then both results broadcast back over the block.
    text = fused_netlist(
        [
            [
                sub("add0", "add", ["input0", "input1"], "intermed0", (3, 3), (2, 2)),
                sub(
                    "red0",
                    "reduce",
                    ["intermed0"],
                    "intermed1",
                    (3, 1),
                    (2, 1),
                    pop="[intermed0]",
                    attributes="{dim: c, type: max, m_k: 3, u_kt: 2}",
                ),
            ],
            [
                sub("add1", "add", ["input2", "input3"], "intermed2", (6, 1), (2, 4)),
                sub(
                    "red1",
                    "reduce",
                    ["intermed2"],
                    "intermed3",
                    (1, 1),
                    (1, 4),
                    pop="[intermed2]",
                    attributes="{dim: r, type: max, m_k: 6, u_kt: 2}",
                ),
            ],
            [
                sub(
                    "sub2",
                    "subtract",
                    ["intermed1", "intermed3"],
                    "output",
                    (3, 1),
                    (2, 4),
                    pop="[intermed1, intermed3]",
                    input_0_tms="[broadcast: {c: 4}]",
                    input_1_tms="[broadcast: {r: 6}]",
                ),
            ],
        ],
        inputs=4,
        intermediates=4,
        mblock=(3, 1),
        ublock=(2, 4),
        arch="[grayskull, wormhole_b0, blackhole]",
    )
    assert check_netlist(text) == []


def test_an_empty_fused_op_or_schedule_is_an_error() -> None:
    """The backend asserts "Must have schedules" and "Must have scheduled_ops"; the checker
    only warned (schedule.output_last), so the default check passed such a netlist."""
    empty_schedule = fused_netlist([[sub("a", "datacopy", ["input0"], "output")]]) + "      - []\n"
    no_schedules = fused_netlist([]).replace("schedules:\n", "schedules: []\n")
    for text, message in (
        (empty_schedule, "schedule 1: schedule has no sub-ops"),
        (no_schedules, "no schedules"),
    ):
        found = [(v.rule, v.severity) for v in check_netlist(text)]
        assert ("schedule.non_empty", "error") in found, found
        assert any(message in str(v) for v in check_netlist(text))


@pytest.mark.parametrize("df", ["Float16", "Bfp8", "Bfp4", "Bfp2"])
def test_a_reduce_with_float32_dest_reading_an_exponent_a_format_is_an_error(df: str) -> None:
    """tt-budabackend issue #1464: a reduce (a graph op, or a sub-op of a fused op) with
    acc_df Float32 cannot read exponent-a formats; the backend asserts it in both places."""
    formats = {"acc_df": "Float32", "out_df": "Float16_b", "intermed_df": "Float16_b"}
    reduce = sub("r", "reduce", ["input0"], "intermed0", attributes="{type: max, dim: c, m_k: 1, u_kt: 1}")
    schedules = [[reduce], [sub("m", "multiply", ["intermed0", "input1"], "output", pop="[intermed0]")]]
    fused = fused_netlist(schedules, in_df=["Float16_b", df], **formats)
    (violation,) = [v for v in check_netlist(fused) if v.rule == "formats.reduce_exp_a"]
    assert (violation.graph_op, violation.sub_op) == ("op0", "r")
    assert f"in_df[1] = {df}" in violation.message and "acc_df Float32" in violation.message
    assert check_netlist(fused_netlist(schedules, in_df=["Float16_b", "Bfp8_b"], **formats)) == []
    graph_reduce = (
        "    op1: {type: reduce, grid_loc: [0, 1], grid_size: [1, 1], inputs: [in0], in_df: [Float16], "
        "acc_df: Float32, out_df: Float16, intermed_df: Float16, t: 1, mblock: [1, 1], ublock: [1, 1], "
        "attributes: {type: max, dim: c, m_k: 1, u_kt: 1}}\n"
    )
    text = fused_netlist([[sub("a", "datacopy", ["input0"], "output")]], extra_ops=graph_reduce)
    (violation,) = [v for v in check_netlist(text) if v.rule == "formats.reduce_exp_a"]
    assert violation.graph_op == "op1" and "in_df[0] = Float16" in violation.message


def test_rules_are_printable_and_documented() -> None:
    table = rules_table().splitlines()
    assert len(table) == len(RULES)
    assert table[0].startswith("general.1 ")
    assert all(rule.doc and rule.summary for rule in RULES)
    assert len({rule.id for rule in RULES}) == len(RULES)
    assert rule_by_id("matmul.16") is rule_by_id("matmul.13")
    assert "also matmul.15" in str(rule_by_id("matmul.12"))


def test_every_rule_says_how_sure_it_is_and_what_enforces_it() -> None:
    from nkigym_graph.buda.rules.enforcement import ENFORCEMENT

    assert set(ENFORCEMENT) == {rule.id for rule in RULES}
    for rule in RULES:
        assert rule.severity in ("error", "warning", "info"), rule.id
        assert rule.enforcement and rule.backend_ref, rule.id
    retired = {rule.id for rule in RULES if rule.severity == "info"}
    assert retired == {"matmul.13", "unsupported.7"}
    assert "09feebee" in rule_by_id("matmul.16").backend_ref
    details = rules_table(details=True)
    assert all(f"backend: {rule.backend_ref}" in details for rule in RULES)
