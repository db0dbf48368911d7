"""The checker against the real backend: minimal netlists with the structure of public
tenstorrent/tt-budabackend test netlists (written here from their structure, not copied).

Valid ones come from ``verif/op_tests/netlists/fused_op/`` (the backend's CI runs them):
each gives no error. Invalid ones come from ``verif/error_tests/netlists/invalid/fused_op/``:
each reports, as an error, the rule matching the first assert the backend fails on.
"""

from __future__ import annotations

import pytest
from buda.builders import fused_netlist, sub

from nkigym_graph.buda import check_netlist

POP0, POP1, POP2 = "[intermed0]", "[intermed1]", "[intermed2]"
INT8 = {"acc_df": "Int32", "out_df": "Int8", "intermed_df": "Int8"}


def mm(name: str, a: str, b: str, out: str, m_k: int = 1, u_kt: int = 1, **fields: object) -> str:
    return sub(name, "matmul", [a, b], out, attributes=f"{{m_k: {m_k}, u_kt: {u_kt}}}", **fields)  # type: ignore[arg-type]


VALID = {
    # netlist_fused_op_with_16_inputs.yaml: the first schedule ends with an ordinary op whose
    # intermediate a later schedule reads; single-add schedules follow each other.
    "with_16_inputs": fused_netlist(
        [
            [sub("a0", "add", ["input0", "input1"], "intermed0")],
            [mm("m0", "input2", "input3", "intermed1")],
            [sub("a1", "add", ["intermed1", "intermed0"], "intermed2", pop="[intermed1, intermed0]")],
            [sub("a2", "add", ["intermed2", "input0"], "output", pop=POP2)],
        ],
        inputs=4,
        intermediates=3,
    ),
    # netlist_fused_op_with_matmul_kernel_broadcast.yaml: grid [2, 1]; a row-sum matmul, then a
    # schedule (column broadcast of its result, a multiply) split before a final copy.
    "with_matmul_kernel_broadcast": fused_netlist(
        [
            [mm("sum", "input0", "input1", "intermed0", u_kt=8, mb=(2, 1))],
            [
                sub(
                    "sub",
                    "add",
                    ["input0", "intermed0"],
                    "intermed1",
                    (2, 2),
                    (1, 4),
                    pop_last=POP0,
                    input_1_tms="[broadcast: {c: 8}]",
                ),
                sub("mul", "multiply", ["intermed1", "input2"], "intermed2", (2, 2), (1, 4), pop=POP1),
            ],
            [sub("nop", "nop", ["intermed2"], "output", (2, 2), (1, 4), pop=POP2)],
        ],
        inputs=3,
        intermediates=3,
        grid=(2, 1),
        mblock=(2, 2),
        ublock=(1, 4),
        op_extra="      input_1_tms: [broadcast: {r: 4}]\n",
    ),
    # netlist_fused_op_with_matmul_reduce_input_fork.yaml: as above, input 0 forked to the
    # matmul and to the next schedule, input 1 popped by the matmul.
    "with_matmul_reduce_input_fork": fused_netlist(
        [
            [mm("sum", "input0", "input1", "intermed0", u_kt=8, mb=(2, 1), pop="[input1]")],
            [
                sub(
                    "sub",
                    "add",
                    ["input0", "intermed0"],
                    "intermed1",
                    (2, 2),
                    (1, 4),
                    pop="[input0]",
                    pop_last=POP0,
                    input_1_tms="[broadcast: {c: 8}]",
                ),
                sub("mul", "multiply", ["intermed1", "input2"], "intermed2", (2, 2), (1, 4), pop=POP1),
            ],
            [sub("nop", "nop", ["intermed2"], "output", (2, 2), (1, 4), pop=POP2)],
        ],
        inputs=3,
        intermediates=3,
        grid=(2, 1),
        mblock=(2, 2),
        ublock=(1, 4),
    ),
    # netlist_fused_op_with_matmul_reduce_multi_rows.yaml: matmul (m_k 3), a reciprocal of its
    # result in the same buffer in a schedule of its own, then a broadcast multiply.
    "with_matmul_reduce_multi_rows": fused_netlist(
        [
            [mm("sum", "input0", "input1", "intermed0", m_k=3, u_kt=4, mb=(3, 1), ub=(2, 1))],
            [sub("rec", "reciprocal", ["intermed0"], "intermed0", (3, 1), (2, 1), pop_last=POP0)],
            [
                sub(
                    "mul",
                    "multiply",
                    ["input2", "intermed0"],
                    "output",
                    (3, 3),
                    (2, 4),
                    pop_last=POP0,
                    input_1_tms="[broadcast: {c: 12}]",
                )
            ],
        ],
        inputs=3,
        mblock=(3, 3),
        ublock=(2, 4),
    ),
    # netlist_fused_op_r_bcast_with_matmul.yaml: a fused matmul on grid [1, 2] (not [m, 1]),
    # its result row-broadcast into an add.
    "r_bcast_with_matmul": fused_netlist(
        [
            [mm("lc", "input0", "input1", "intermed0", ub=(1, 4))],
            [
                sub(
                    "add",
                    "add",
                    ["input2", "intermed0"],
                    "output",
                    (4, 1),
                    (2, 4),
                    pop_last=POP0,
                    input_1_tms="[broadcast: {r: 8}]",
                )
            ],
        ],
        inputs=3,
        grid=(1, 2),
        mblock=(4, 1),
        ublock=(2, 4),
    ),
    # netlist_fused_op_with_matmul_input1_row_and_column_input0_intermed.yaml: matmul input 0
    # from an intermediate while input 1 is not a column of ublocks (mblock_n 2).
    "with_matmul_input1_row_and_column_input0_intermed": fused_netlist(
        [
            [
                sub("exp", "exp", ["input0"], "intermed0", (1, 2)),
                mm("mm", "intermed0", "input1", "intermed1", m_k=2, mb=(1, 2), pop=POP0),
            ],
            [sub("nop", "nop", ["intermed1"], "output", (1, 2), pop=POP1)],
        ],
        intermediates=2,
        mblock=(1, 2),
    ),
    # wormhole_b0/netlist_fused_op_requantization_int8.yaml: requantization of an Int8 input
    # with Float32 scalars (input 1 is not dest).
    "requantization_int8": fused_netlist(
        [
            [
                sub("rq", "requantization", ["input0", "input1"], "intermed0", ub=(1, 2)),
                sub("mul", "multiply", ["input2", "intermed0"], "output", ub=(1, 2), pop=POP0),
            ]
        ],
        inputs=3,
        ublock=(1, 2),
        in_df=["Int8", "Float32", "Int8"],
        **INT8,
    ),
}

VALID_NOTES = {
    "with_16_inputs": {"general.7"},
    "with_matmul_kernel_broadcast": {"general.7"},
    "with_matmul_reduce_input_fork": {"general.7"},
    "with_matmul_reduce_multi_rows": {"general.7"},
    "r_bcast_with_matmul": {"general.8"},
    "with_matmul_input1_row_and_column_input0_intermed": {"matmul.13"},
    "requantization_int8": set(),
}
"""What each valid case still reports, as info notes: the rules an older checker rejected
them for (redundant splits, grid [1, 2], the retired column-of-ublocks rule)."""

INVALID = {
    # netlist_fused_op_invalid_intermed_buffer_usage.yaml: a [1, 2]-mblock copy made in a
    # schedule ending with a matmul is read in the next one.
    "invalid_intermed_buffer_usage": (
        "unsupported.6",
        fused_netlist(
            [
                [
                    sub("cp", "datacopy", ["input0"], "intermed0", (1, 2)),
                    mm("mm", "intermed0", "input1", "intermed1", m_k=2),
                ],
                [
                    sub(
                        "add",
                        "add",
                        ["intermed0", "intermed1"],
                        "output",
                        (1, 2),
                        pop="[intermed0, intermed1]",
                        input_1_tms="[broadcast: {c: 2}]",
                    )
                ],
            ],
            intermediates=2,
            mblock=(1, 2),
        ),
    ),
    # netlist_fused_op_matmul_invalid_m_k_u_kt.yaml: the intermediate input 0 has mblock_n 1
    # and ublock_ct 4, the matmul says m_k 4, u_kt 1.
    "matmul_invalid_m_k_u_kt": (
        "dims.matmul",
        fused_netlist(
            [
                [
                    sub("mul", "multiply", ["input0", "input1"], "intermed0", (8, 1), (1, 4)),
                    mm("mm", "intermed0", "input2", "intermed1", m_k=4, mb=(8, 1), pop=POP0),
                ],
                [sub("nop", "nop", ["intermed1"], "output", (8, 1), pop_last=POP1)],
            ],
            inputs=3,
            intermediates=2,
            mblock=(8, 1),
            acc_df="Float32",
        ),
    ),
    # netlist_fused_op_missing_pop_on_intermed.yaml: intermed0 is never popped.
    "missing_pop_on_intermed": (
        "intermed.popped_at_end",
        fused_netlist(
            [
                [
                    sub("np", "nop", ["input0"], "intermed0"),
                    sub("s", "subtract", ["intermed0", "input1"], "output"),
                ]
            ]
        ),
    ),
    # netlist_fused_op_ublock_cannot_fit_into_dest.yaml: a [4, 3] ublock (12 tiles) before a
    # column reduce.
    "ublock_cannot_fit_into_dest": (
        "limits.dest_ublock",
        fused_netlist(
            [
                [
                    sub("cp", "datacopy", ["input0"], "intermed0", (2, 1), (4, 3)),
                    sub(
                        "red",
                        "reduce",
                        ["intermed0"],
                        "output",
                        (2, 1),
                        (4, 1),
                        pop=POP0,
                        attributes="{type: max, dim: c, m_k: 1, u_kt: 3}",
                    ),
                ]
            ],
            inputs=1,
            mblock=(2, 1),
            ublock=(4, 1),
        ),
    ),
    # netlist_fused_op_with_bcast_invalid_input.yaml: a row broadcast of a fused-op input.
    "with_bcast_invalid_input": (
        "broadcast.22",
        fused_netlist(
            [[sub("b", "datacopy", ["input0"], "output", (2, 1), input_0_tms="[broadcast: {r: 2}]")]],
            inputs=1,
            mblock=(2, 1),
        ),
    ),
    # netlist_fused_op_with_bcast_invalid_mblock_c.yaml: a row broadcast growing mblock_m of
    # an intermediate with mblock_n 2.
    "with_bcast_invalid_mblock_c": (
        "broadcast.20",
        fused_netlist(
            [
                [
                    sub("nop", "datacopy", ["input0"], "intermed0", (1, 2)),
                    sub(
                        "b",
                        "datacopy",
                        ["intermed0"],
                        "output",
                        (2, 2),
                        pop=POP0,
                        input_0_tms="[broadcast: {r: 2}]",
                    ),
                ]
            ],
            inputs=1,
            mblock=(2, 2),
        ),
    ),
    # netlist_fused_op_with_bcast_invalid_mblock_r.yaml: a row broadcast of an intermediate
    # with mblock_m 2.
    "with_bcast_invalid_mblock_r": (
        "broadcast.19",
        fused_netlist(
            [
                [
                    sub("nop", "datacopy", ["input0"], "intermed0", (2, 1)),
                    sub(
                        "b",
                        "datacopy",
                        ["intermed0"],
                        "output",
                        (4, 1),
                        pop=POP0,
                        input_0_tms="[broadcast: {r: 2}]",
                    ),
                ]
            ],
            inputs=1,
            ublock=(4, 1),
        ),
    ),
    # netlist_fused_op_with_dest_input_1_gs.yaml: dest as matmul input 1 on Grayskull (the
    # backend's dest loop asserts the Grayskull case before the matmul one).
    "with_dest_input_1_gs": (
        "general.3",
        fused_netlist(
            [
                [
                    sub("a", "add", ["input0", "input1"], "dest"),
                    mm("mm", "input0", "dest", "output", pop="[input0]"),
                ]
            ],
            intermediates=0,
            arch="grayskull",
        ),
    ),
    # netlist_fused_op_with_invalid_dimensions.yaml: a copy of a [2, 1]x[2, 1] matmul result
    # writes [2, 1]x[1, 1].
    "with_invalid_dimensions": (
        "dims.unary_binary",
        fused_netlist(
            [
                [
                    sub("cp", "datacopy", ["input0"], "intermed0", (2, 4), (2, 1)),
                    mm("mm", "intermed0", "input1", "intermed1", m_k=4, mb=(2, 1), ub=(2, 1), pop=POP0),
                ],
                [sub("nop", "datacopy", ["intermed1"], "output", (2, 1), pop=POP1)],
            ],
            intermediates=2,
            mblock=(2, 1),
        ),
    ),
    # netlist_fused_op_with_matmul_dest_input.yaml: dest as matmul input 0.
    "with_matmul_dest_input": (
        "general.4",
        fused_netlist(
            [[sub("nop", "datacopy", ["input0"], "dest"), mm("mm", "dest", "input1", "output")]],
            intermediates=0,
        ),
    ),
    # netlist_fused_op_with_matmul_intermed_input_1.yaml: an intermediate as matmul input 1
    # with m_k 2.
    "with_matmul_intermed_input_1": (
        "matmul.14",
        fused_netlist(
            [
                [
                    sub("cp", "datacopy", ["input0"], "intermed0", (2, 1)),
                    mm("mm", "input1", "intermed0", "intermed1", m_k=2, pop=POP0),
                ],
                [sub("nop", "datacopy", ["intermed1"], "output", pop=POP1)],
            ],
            intermediates=2,
        ),
    ),
    # netlist_fused_op_with_matmul_invalid_output.yaml: a matmul with m_k 2 writes output.
    "with_matmul_invalid_output": (
        "matmul.18",
        fused_netlist(
            [
                [
                    sub("cp", "datacopy", ["input0"], "intermed0", (2, 2)),
                    mm("mm", "intermed0", "input1", "output", m_k=2, mb=(2, 1), pop=POP0),
                ]
            ],
            mblock=(2, 1),
        ),
    ),
}

HISTORICAL = fused_netlist(
    [
        [mm("mm", "input0", "input1", "intermed0", m_k=3, u_kt=2, mb=(1, 2), ub=(2, 2))],
        [sub("nop", "nop", ["intermed0"], "output", (1, 2), (2, 2), pop=POP0)],
    ],
    mblock=(1, 2),
    ublock=(2, 2),
)
"""netlist_fused_op_with_matmul_input1_not_column.yaml: kept in the invalid list from a
backend version that asserted ``output_dim.mblock_n == 1`` for every fused matmul; the
check is gone from ``verify`` of a scheduled op and net2hlks fuses such matmuls since
commit 09feebee, so it is accepted."""


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_upstream_structure_has_no_errors_or_warnings(name: str) -> None:
    text = VALID[name]
    assert check_netlist(text) == []
    assert check_netlist(text, strict=True) == []
    notes = check_netlist(text, min_severity="info")
    assert {v.rule for v in notes} == VALID_NOTES[name]
    assert {v.severity for v in notes} <= {"info"}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_upstream_structure_fails_on_the_backends_first_assert(name: str) -> None:
    rule, text = INVALID[name]
    errors = check_netlist(text)
    assert rule in {v.rule for v in errors}, f"expected {rule}, got {sorted({v.rule for v in errors})}"
    assert all(v.severity == "error" for v in errors)


def test_a_non_column_matmul_once_rejected_is_accepted_since_upstream_fused_it() -> None:
    assert check_netlist(HISTORICAL, strict=True) == []
