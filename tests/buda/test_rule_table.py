"""Every checker rule: a minimal netlist breaking it is rejected with its id, and the minimal
fix of that netlist passes every rule."""

from __future__ import annotations

import pytest
from buda.builders import fused_netlist, queue, sub

from nkigym_graph.buda import RULES, check_netlist, rule_by_id

INT = {"acc_df": "Int32", "out_df": "Int8", "intermed_df": "Int8", "in_df": ["Int8", "Int8"]}
"""Data formats of a valid integer fused op."""


def dc(name: str, src: str, out: str, mb=(1, 1), ub=(1, 1), **fields: str) -> str:
    return sub(name, "datacopy", [src], out, mb, ub, **fields)


def mm(name: str, a: str, b: str, out: str, m_k=1, u_kt=1, mb=(1, 1), ub=(1, 1), **fields: str) -> str:
    return sub(name, "matmul", [a, b], out, mb, ub, attributes=f"{{m_k: {m_k}, u_kt: {u_kt}}}", **fields)


def bcast(**dims: int) -> str:
    return "[broadcast: {" + ", ".join(f"{d}: {n}" for d, n in dims.items()) + "}]"


POP0, POP1 = "[intermed0]", "[intermed1]"
OUT_OF_MATMUL = [dc("d", "intermed1", "output", pop=POP1)]
"""A second schedule copying a matmul/reduce result (intermed1) to the output."""


def graph_ops(*ops: tuple[str, str, dict[str, str]] | tuple[str, str]) -> str:
    """Graph ops ``op1``, ``op2``, ... next to ``op0``, each ``(type, inputs[, fields])``: one
    tile each on its own core unless ``fields`` say otherwise."""
    lines = []
    for number, (op_type, inputs, *more) in enumerate(ops, start=1):
        fields = {
            "type": op_type,
            "grid_loc": f"[0, {number}]",
            "grid_size": "[1, 1]",
            "inputs": f"[{inputs}]",
        }
        fields |= {"t": "1", "mblock": "[1, 1]", "ublock": "[1, 1]", **(more[0] if more else {})}
        lines.append(f"    op{number}: {{{', '.join(f'{k}: {v}' for k, v in fields.items())}}}\n")
    return "".join(lines)


def reduce_attrs(dim: str, m_k: int = 1, u_kt: int = 1, kind: str = "max") -> str:
    return f"{{type: {kind}, dim: {dim}, m_k: {m_k}, u_kt: {u_kt}}}"


CASES = [
    # --- general ---------------------------------------------------------------------------
    (
        "general.1",
        fused_netlist([[sub("a", "add", ["input0", "input1"], "output", input_0_tms="[tile_broadcast: c]")]]),
        fused_netlist([[sub("a", "add", ["input0", "input1"], "output", input_1_tms="[tile_broadcast: c]")]]),
    ),
    (
        "general.2",
        fused_netlist(
            [
                [
                    dc("a", "input0", "dest"),
                    sub("b", "add", ["dest", "input1"], "intermed0"),
                    sub("c", "multiply", ["intermed0", "dest"], "output", pop=POP0),
                ]
            ]
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "dest"),
                    sub("b", "add", ["dest", "input1"], "intermed0"),
                    sub("c", "multiply", ["intermed0", "input0"], "output", pop=POP0),
                ]
            ]
        ),
    ),
    (
        "general.3",
        fused_netlist(
            [[dc("a", "input0", "dest"), sub("b", "add", ["input1", "dest"], "output")]], arch="grayskull"
        ),
        fused_netlist(
            [[dc("a", "input0", "dest"), sub("b", "add", ["dest", "input1"], "output")]], arch="grayskull"
        ),
    ),
    (
        "general.4",
        fused_netlist([[dc("a", "input0", "dest"), mm("m", "dest", "input1", "output")]]),
        fused_netlist([[dc("a", "input0", "intermed0"), mm("m", "intermed0", "input1", "output", pop=POP0)]]),
    ),
    (
        "general.5",
        fused_netlist([[dc("a", "input0", "dest"), sub("b", "maximum", ["dest", "input1"], "output")]]),
        fused_netlist([[sub("b", "maximum", ["input0", "input1"], "output")]]),
    ),
    (
        "general.6",
        fused_netlist([[mm("m", "input0", "input1", "dest")], [dc("d", "dest", "output")]]),
        fused_netlist(
            [[mm("m", "input0", "input1", "intermed0")], [dc("d", "intermed0", "output", pop=POP0)]]
        ),
    ),
    *[
        (
            rule,
            fused_netlist(
                [[mm("m", "input0", "input1", "intermed0"), dc("d", "intermed0", "output", pop=POP0)]]
            ),
            fused_netlist(
                [[mm("m", "input0", "input1", "intermed0")], [dc("d", "intermed0", "output", pop=POP0)]]
            ),
        )
        for rule in ("general.7", "schedule.matmul_last")
    ],
    (
        "general.8",
        fused_netlist([[mm("m", "input0", "input1", "output")]], grid=(1, 2)),
        fused_netlist([[mm("m", "input0", "input1", "output")]], grid=(2, 1)),
    ),
    (
        "general.9",  # three fused-op inputs multicast down a column of cores: one NOC short
        fused_netlist(
            [
                [mm("m0", "input0", "input1", "intermed0")],
                [mm("m1", "intermed0", "input2", "intermed1", pop=POP0)],
                [mm("m2", "intermed1", "input3", "intermed0", pop=POP1)],
                [dc("d", "intermed0", "output", pop=POP0)],
            ],
            inputs=4,
            grid=(2, 1),
            intermediates=2,
        ),
        fused_netlist(
            [
                [mm("m0", "input0", "input1", "intermed0")],
                [mm("m1", "intermed0", "input1", "intermed1", pop=POP0)],
                OUT_OF_MATMUL,
            ],
            grid=(2, 1),
            intermediates=2,
        ),
    ),
    (
        "dest.write_before_read",
        fused_netlist(
            [
                [
                    dc("a", "input0", "dest"),
                    dc("b", "input1", "intermed0"),
                    sub("c", "add", ["dest", "intermed0"], "output", pop=POP0),
                ]
            ]
        ),
        fused_netlist(
            [
                [
                    dc("b", "input1", "intermed0"),
                    dc("a", "input0", "dest"),
                    sub("c", "add", ["dest", "intermed0"], "output", pop=POP0),
                ]
            ]
        ),
    ),
    # --- not supported ---------------------------------------------------------------------
    (
        "unsupported.1",
        fused_netlist([[sub("a", "splice", ["input0"], "output")]]),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "unsupported.2",
        fused_netlist([[dc("a", "input0", "output")]], op_extra="      tile_dim: [16, 32]\n"),
        fused_netlist([[dc("a", "input0", "output")]], op_extra="      tile_dim: [32, 32]\n"),
    ),
    (
        "unsupported.3",
        fused_netlist([[sub("r", "reduce", ["input0"], "output", attributes=reduce_attrs("rc"))]]),
        fused_netlist([[sub("r", "reduce", ["input0"], "output", attributes=reduce_attrs("r"))]]),
    ),
    (
        "unsupported.4",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", mb=(2, 1)),
                    dc("b", "intermed0", "output", ub=(2, 1), pop=POP0),
                ]
            ],
            ublock=(2, 1),
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", mb=(2, 1)),
                    dc("b", "intermed0", "output", mb=(2, 1), pop=POP0),
                ]
            ],
            ublock=(2, 1),
        ),
    ),
    (
        "unsupported.5",
        fused_netlist([[dc("a", "input0", "output", math_fidelity="LoFi")]]),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "unsupported.6",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", mb=(2, 1)),
                    mm("m", "input0", "input1", "intermed1", mb=(2, 1)),
                ],
                [
                    sub(
                        "b",
                        "add",
                        ["intermed0", "intermed1"],
                        "output",
                        mb=(2, 1),
                        pop="[intermed0, intermed1]",
                    )
                ],
            ],
            intermediates=2,
            mblock=(2, 1),
        ),
        fused_netlist(
            [
                [mm("m", "input0", "input1", "intermed1", mb=(2, 1))],
                [
                    dc("a", "input0", "intermed0", mb=(2, 1)),
                    sub(
                        "b",
                        "add",
                        ["intermed0", "intermed1"],
                        "output",
                        mb=(2, 1),
                        pop="[intermed0, intermed1]",
                    ),
                ],
            ],
            intermediates=2,
            mblock=(2, 1),
        ),
    ),
    (
        "unsupported.7",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    dc("b", "intermed0", "intermed1", ub=(1, 2), pop=POP0, input_0_tms=bcast(c=2)),
                    dc("c", "input1", "intermed0", ub=(1, 2)),
                    sub(
                        "d",
                        "add",
                        ["intermed1", "intermed0"],
                        "output",
                        ub=(1, 2),
                        pop="[intermed0, intermed1]",
                    ),
                ]
            ],
            intermediates=2,
            ublock=(1, 2),
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    dc("b", "intermed0", "intermed1", ub=(1, 2), pop=POP0, input_0_tms=bcast(c=2)),
                    dc("c", "input1", "intermed2", ub=(1, 2)),
                    sub(
                        "d",
                        "add",
                        ["intermed1", "intermed2"],
                        "output",
                        ub=(1, 2),
                        pop="[intermed2, intermed1]",
                    ),
                ]
            ],
            intermediates=3,
            ublock=(1, 2),
        ),
    ),
    (
        "unsupported.8",
        fused_netlist([[dc("a", "input0", "output", ublock_order="c")]]),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "unsupported.9",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", mb=(2, 2)),
                    sub(
                        "r",
                        "reduce",
                        ["intermed0"],
                        "intermed1",
                        mb=(1, 2),
                        pop=POP0,
                        attributes=reduce_attrs("r", 2),
                    ),
                ],
                [dc("d", "intermed1", "output", mb=(1, 2), pop=POP1)],
            ],
            intermediates=2,
            mblock=(1, 2),
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", mb=(2, 2)),
                    sub(
                        "r",
                        "reduce",
                        ["intermed0"],
                        "intermed1",
                        mb=(1, 2),
                        pop=POP0,
                        attributes=reduce_attrs("r", 2),
                    ),
                ],
                [dc("d", "intermed1", "output", mb=(1, 2), pop=POP1)],
            ],
            intermediates=2,
            mblock=(1, 2),
            ublock_order="c",
        ),
    ),
    (
        "unsupported.10",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", mb=(2, 2)),
                    sub(
                        "r",
                        "reduce",
                        ["intermed0"],
                        "intermed1",
                        mb=(2, 1),
                        pop=POP0,
                        attributes=reduce_attrs("c", 2),
                    ),
                ],
                [dc("d", "intermed1", "output", mb=(2, 1), pop=POP1)],
            ],
            intermediates=2,
            mblock=(2, 1),
            ublock_order="c",
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", mb=(2, 2)),
                    sub(
                        "r",
                        "reduce",
                        ["intermed0"],
                        "intermed1",
                        mb=(2, 1),
                        pop=POP0,
                        attributes=reduce_attrs("c", 2),
                    ),
                ],
                [dc("d", "intermed1", "output", mb=(2, 1), pop=POP1)],
            ],
            intermediates=2,
            mblock=(2, 1),
        ),
    ),
    (
        "unsupported.11",
        fused_netlist([[dc("a", "input0", "output", input_0_tms="[transpose]")]]),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "unsupported.12",
        fused_netlist([[sub("a", "maximum", ["input0", "input1"], "dest"), dc("b", "dest", "output")]]),
        fused_netlist([[sub("a", "maximum", ["input0", "input1"], "output")]]),
    ),
    # --- matmul ----------------------------------------------------------------------------
    *[
        (
            rule,
            fused_netlist(
                [
                    [mm("m", "input0", "input1", "intermed0", mb=(1, 2))],
                    [sub("a", "add", ["intermed0", "input1"], "output", mb=(1, 2), pop=POP0)],
                ],
                inputs=3,
                mblock=(1, 2),
            ),
            fused_netlist(
                [
                    [mm("m", "input0", "input1", "intermed0", mb=(1, 2))],
                    [sub("a", "add", ["intermed0", "input2"], "output", mb=(1, 2), pop=POP0)],
                ],
                inputs=3,
                mblock=(1, 2),
            ),
        )
        for rule in ("matmul.12", "matmul.15")
    ],
    *[
        (
            rule,
            fused_netlist(
                [
                    [
                        dc("a", "input0", "intermed0"),
                        mm("m", "intermed0", "input1", "output", mb=(1, 2), pop=POP0),
                    ]
                ],
                mblock=(1, 2),
            ),
            fused_netlist(
                [
                    [
                        dc("a", "input0", "intermed0"),
                        mm("m", "intermed0", "input1", "output", ub=(1, 2), pop=POP0),
                    ]
                ],
                ublock=(1, 2),
            ),
        )
        for rule in ("matmul.13", "matmul.16")
    ],
    *[
        (
            rule,
            fused_netlist(
                [
                    [
                        dc("a", "input1", "intermed0", mb=(2, 1)),
                        mm("m", "input0", "intermed0", "intermed1", m_k=2, pop=POP0),
                    ],
                    OUT_OF_MATMUL,
                ],
                intermediates=2,
            ),
            fused_netlist(
                [
                    [
                        dc("a", "input1", "intermed0", ub=(2, 1)),
                        mm("m", "input0", "intermed0", "intermed1", u_kt=2, pop=POP0),
                    ],
                    OUT_OF_MATMUL,
                ],
                intermediates=2,
            ),
        )
        for rule in ("matmul.14", "matmul.17")
    ],
    (
        "matmul.18",
        fused_netlist([[mm("m", "input0", "input1", "output", m_k=2)]]),
        fused_netlist([[mm("m", "input0", "input1", "intermed1", m_k=2)], OUT_OF_MATMUL], intermediates=2),
    ),
    # --- broadcast -------------------------------------------------------------------------
    (
        "broadcast.19",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", mb=(2, 1)),
                    dc("b", "intermed0", "output", mb=(4, 1), pop=POP0, input_0_tms=bcast(r=2)),
                ]
            ],
            mblock=(4, 1),
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    dc("b", "intermed0", "output", mb=(4, 1), pop=POP0, input_0_tms=bcast(r=4)),
                ]
            ],
            mblock=(4, 1),
        ),
    ),
    (
        "broadcast.20",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", mb=(1, 2)),
                    dc("b", "intermed0", "output", mb=(2, 2), pop=POP0, input_0_tms=bcast(r=2)),
                ]
            ],
            mblock=(2, 2),
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", mb=(1, 2)),
                    dc("b", "intermed0", "output", mb=(1, 2), ub=(2, 1), pop=POP0, input_0_tms=bcast(r=2)),
                ]
            ],
            mblock=(2, 2),
        ),
    ),
    (
        "broadcast.21",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", ub=(2, 1)),
                    dc("b", "intermed0", "output", ub=(4, 1), pop=POP0, input_0_tms=bcast(r=2)),
                ]
            ],
            ublock=(4, 1),
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    dc("b", "intermed0", "output", ub=(4, 1), pop=POP0, input_0_tms=bcast(r=4)),
                ]
            ],
            ublock=(4, 1),
        ),
    ),
    (
        "broadcast.22",
        fused_netlist([[dc("b", "input0", "output", mb=(2, 1), input_0_tms=bcast(r=2))]], mblock=(2, 1)),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    dc("b", "intermed0", "output", mb=(2, 1), pop=POP0, input_0_tms=bcast(r=2)),
                ]
            ],
            mblock=(2, 1),
        ),
    ),
    (
        "broadcast.23",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    dc("b", "intermed0", "output", mb=(2, 2), pop=POP0, input_0_tms=bcast(r=2, c=2)),
                ]
            ],
            mblock=(2, 2),
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    dc("b", "intermed0", "intermed1", mb=(2, 1), pop=POP0, input_0_tms=bcast(r=2)),
                    dc("c", "intermed1", "output", mb=(2, 2), pop=POP1, input_0_tms=bcast(c=2)),
                ]
            ],
            intermediates=2,
            mblock=(2, 2),
        ),
    ),
    (
        "broadcast.24",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    mm("m", "intermed0", "input1", "intermed1", m_k=2, pop=POP0, input_0_tms=bcast(r=2)),
                ],
                OUT_OF_MATMUL,
            ],
            intermediates=2,
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    mm("m", "intermed0", "input1", "intermed1", m_k=2, pop=POP0, input_0_tms=bcast(c=2)),
                ],
                OUT_OF_MATMUL,
            ],
            intermediates=2,
        ),
    ),
    (
        "broadcast.25",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", ub=(1, 2)),
                    mm("m", "intermed0", "input1", "intermed1", m_k=2, pop=POP0),
                ],
                OUT_OF_MATMUL,
            ],
            intermediates=2,
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", ub=(1, 2)),
                    mm("m", "intermed0", "input1", "intermed1", u_kt=2, pop=POP0),
                ],
                OUT_OF_MATMUL,
            ],
            intermediates=2,
        ),
    ),
    (
        "broadcast.z",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    dc("b", "intermed0", "output", pop=POP0, input_0_tms=bcast(z=2)),
                ]
            ]
        ),
        fused_netlist([[dc("a", "input0", "intermed0"), dc("b", "intermed0", "output", pop=POP0)]]),
    ),
    # --- integer fused ops -----------------------------------------------------------------
    (
        "int.1",
        fused_netlist([[sub("a", "exp", ["input0"], "output")]], **INT),
        fused_netlist([[dc("a", "input0", "output")]], **INT),
    ),
    (
        "int.2",
        fused_netlist([[dc("a", "input0", "output")]], in_df=["Int8", "Float16_b"]),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "int.3",
        fused_netlist([[dc("a", "input0", "dest"), sub("b", "add", ["dest", "input1"], "output")]], **INT),
        fused_netlist(
            [[dc("a", "input0", "intermed0"), sub("b", "add", ["intermed0", "input1"], "output", pop=POP0)]],
            **INT,
        ),
    ),
    (
        "int.4",
        fused_netlist([[dc("a", "input0", "output")]], **{**INT, "intermed_df": "Float16_b"}),
        fused_netlist([[dc("a", "input0", "output")]], **INT),
    ),
    (
        "int.5",
        fused_netlist(
            [[sub("a", "multiply", ["input0", "input1"], "output")]], **{**INT, "in_df": ["Int32", "Int8"]}
        ),
        fused_netlist([[sub("a", "multiply", ["input0", "input1"], "output")]], **INT),
    ),
    (
        "int.6",
        fused_netlist([[dc("a", "input0", "output")]], **{**INT, "out_df": "Float32"}),
        fused_netlist([[dc("a", "input0", "output")]], **INT),
    ),
    (
        "int.7",
        fused_netlist(
            [
                [
                    sub("m", "multiply", ["input0", "input1"], "dest", ub=(1, 4)),
                    sub("q", "requantization", ["input2", "dest"], "output", ub=(1, 4)),
                ]
            ],
            inputs=3,
            ublock=(1, 4),
            **{**INT, "in_df": ["Int8", "Int8", "Float32"]},
        ),
        fused_netlist(
            [
                [
                    sub("m", "multiply", ["input0", "input1"], "dest", mb=(1, 2), ub=(1, 2)),
                    sub("q", "requantization", ["input2", "dest"], "output", mb=(1, 2), ub=(1, 2)),
                ]
            ],
            inputs=3,
            ublock=(1, 4),
            **{**INT, "in_df": ["Int8", "Int8", "Float32"]},
        ),
    ),
    (
        "int.8",
        fused_netlist(
            [[sub("q", "quantization", ["input0", "input1"], "output")]],
            **{**INT, "in_df": ["Float32", "Float16_b"]},
        ),
        fused_netlist(
            [[sub("q", "quantization", ["input0", "input1"], "output")]],
            **{**INT, "in_df": ["Float32", "Float32"]},
        ),
    ),
    (
        "int.9",
        fused_netlist(
            [[sub("q", "dequantization", ["input0", "input1"], "output")]],
            **{**INT, "in_df": ["Float32", "Int8"], "out_df": "Float32"},
        ),
        fused_netlist(
            [[dc("a", "input1", "dest"), sub("q", "dequantization", ["input0", "dest"], "output")]],
            **{**INT, "in_df": ["Float32", "Int8"], "out_df": "Float32"},
        ),
    ),
    (
        "int.arch",
        fused_netlist([[dc("a", "input0", "output")]], arch="grayskull", **INT),
        fused_netlist([[dc("a", "input0", "output")]], arch="wormhole_b0", **INT),
    ),
    # --- rules the backend checks in code --------------------------------------------------
    (
        "schedule.output_last",
        fused_netlist([[dc("a", "input0", "output"), sub("b", "add", ["input0", "input1"], "dest")]]),
        fused_netlist(
            [
                [
                    sub("b", "add", ["input0", "input1"], "dest"),
                    sub("a", "multiply", ["dest", "input0"], "output"),
                ]
            ]
        ),
    ),
    (
        "schedule.non_empty",  # the fused op's second schedule has no sub-ops
        fused_netlist([[dc("a", "input0", "output")]]) + "      - []\n",
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "formats.reduce_exp_a",  # a reduce with Float32 dest reading Float16 (exponent-a) inputs
        fused_netlist(
            [[sub("r", "reduce", ["input0"], "output", attributes=reduce_attrs("c"))]],
            in_df=["Float16", "Float16"],
            acc_df="Float32",
            out_df="Float16",
            intermed_df="Float16",
        ),
        fused_netlist(
            [[sub("r", "reduce", ["input0"], "output", attributes=reduce_attrs("c"))]],
            in_df=["Float16", "Float16"],
            acc_df="Float16",
            out_df="Float16",
            intermed_df="Float16",
        ),
    ),
    (
        "intermed.write_before_read",
        fused_netlist([[sub("a", "add", ["input0", "intermed0"], "output")]]),
        fused_netlist(
            [[dc("w", "input1", "intermed0"), sub("a", "add", ["input0", "intermed0"], "output", pop=POP0)]]
        ),
    ),
    (
        "intermed.pop_before_rewrite",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    dc("b", "input1", "intermed0"),
                    dc("c", "intermed0", "output", pop=POP0),
                ]
            ]
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0"),
                    dc("b", "input1", "intermed1"),
                    sub("c", "add", ["intermed0", "intermed1"], "output", pop="[intermed0, intermed1]"),
                ]
            ],
            intermediates=2,
        ),
    ),
    (
        "intermed.popped_at_end",
        fused_netlist([[dc("a", "input0", "intermed0"), sub("b", "add", ["intermed0", "input1"], "output")]]),
        fused_netlist(
            [[dc("a", "input0", "intermed0"), sub("b", "add", ["intermed0", "input1"], "output", pop=POP0)]]
        ),
    ),
    (
        "dims.unary_binary",
        fused_netlist(
            [[dc("a", "input0", "intermed0", ub=(2, 1)), dc("b", "intermed0", "output", pop=POP0)]]
        ),
        fused_netlist([[dc("a", "input0", "intermed0"), dc("b", "intermed0", "output", pop=POP0)]]),
    ),
    (
        "dims.matmul",
        fused_netlist(
            [[dc("a", "input0", "intermed0", mb=(2, 1)), mm("m", "intermed0", "input1", "output", pop=POP0)]]
        ),
        fused_netlist([[dc("a", "input0", "intermed0"), mm("m", "intermed0", "input1", "output", pop=POP0)]]),
    ),
    (
        "dims.reduce",
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", mb=(1, 2)),
                    sub("r", "reduce", ["intermed0"], "output", pop=POP0, attributes=reduce_attrs("c")),
                ]
            ]
        ),
        fused_netlist(
            [
                [
                    dc("a", "input0", "intermed0", ub=(1, 2)),
                    sub(
                        "r", "reduce", ["intermed0"], "output", pop=POP0, attributes=reduce_attrs("c", u_kt=2)
                    ),
                ]
            ]
        ),
    ),
    (
        "dims.m_k_u_kt",
        fused_netlist([[sub("m", "matmul", ["input0", "input1"], "output", attributes="{m_k: 1}")]]),
        fused_netlist([[mm("m", "input0", "input1", "output")]]),
    ),
    (
        "dims.fused_output",
        fused_netlist([[dc("a", "input0", "output")]], ublock=(2, 1)),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "names.duplicate_sub_op",
        fused_netlist([[dc("a", "input0", "intermed0"), dc("a", "intermed0", "output", pop=POP0)]]),
        fused_netlist([[dc("a", "input0", "intermed0"), dc("b", "intermed0", "output", pop=POP0)]]),
    ),
    (
        "names.duplicate_definition",
        fused_netlist(
            [[dc("a", "input0", "output")]],
            extra_queues="  in1: {type: queue, input: HOST, entries: 1, grid_size: [1, 1], t: 1, "
            "mblock: [1, 1], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, "
            "dram: [[0, 0x10100000]]}\n",
        ),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "operands.unknown",
        fused_netlist([[dc("a", "input3", "output")]]),
        fused_netlist([[dc("a", "input1", "output")]]),
    ),
    (
        "operands.pop",
        fused_netlist(
            [[dc("a", "input0", "intermed0"), dc("b", "intermed0", "output", pop="[intermed0, input1]")]]
        ),
        fused_netlist([[dc("a", "input0", "intermed0"), dc("b", "intermed0", "output", pop=POP0)]]),
    ),
    (
        "ops.unknown_type",
        fused_netlist([[sub("a", "sub", ["input0", "input1"], "output")]]),
        fused_netlist([[sub("a", "subtract", ["input0", "input1"], "output")]]),
    ),
    (
        "ops.arity",
        fused_netlist([[sub("a", "add", ["input0"], "output")]]),
        fused_netlist([[sub("a", "add", ["input0", "input1"], "output")]]),
    ),
    (
        "ops.reduce_type",
        fused_netlist([[sub("r", "reduce", ["input0"], "output", attributes=reduce_attrs("c", kind="sum"))]]),
        fused_netlist([[sub("r", "reduce", ["input0"], "output", attributes=reduce_attrs("c"))]]),
    ),
    (
        "ops.math_fidelity",
        fused_netlist([[dc("a", "input0", "output")]]).replace(
            "math_fidelity: HiFi3", "math_fidelity: HiFi9"
        ),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "devices.arch",
        fused_netlist([[dc("a", "input0", "output")]], arch="[wormhole_b0, wormhole_c9]"),
        fused_netlist([[dc("a", "input0", "output")]], arch="[wormhole_b0, wormhole]"),
    ),
    (
        "devices.fields",
        fused_netlist([[dc("a", "input0", "output")]], arch="wormhole_b0\n  chips: 2"),
        fused_netlist([[dc("a", "input0", "output")]], arch="wormhole_b0"),
    ),
    (
        "limits.intermediates",
        fused_netlist([[dc("a", "input0", "output")]], intermediates=9),
        fused_netlist([[dc("a", "input0", "output")]], intermediates=8),
    ),
    (
        "limits.inputs",
        fused_netlist([[dc("a", "input0", "output")]], inputs=17),
        fused_netlist([[dc("a", "input0", "output")]], inputs=16),
    ),
    (
        "limits.dest_ublock",
        fused_netlist([[dc("a", "input0", "output", ub=(3, 3))]], ublock=(3, 3)),
        fused_netlist([[dc("a", "input0", "output", mb=(3, 1), ub=(1, 3))]], mblock=(3, 1), ublock=(1, 3)),
    ),
    (
        "graph.programs",
        fused_netlist([[dc("a", "input0", "output")]]).replace("programs:", "unused_programs:"),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "graph.unknown_fused_op",
        fused_netlist([[dc("a", "input0", "output")]], fused_op_id=7),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "graph.fused_op_inputs",
        fused_netlist([[dc("a", "input0", "output")]], fused_inputs=3),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "graph.unknown_input",
        fused_netlist([[dc("a", "input0", "output")]], op_inputs=["in0", "in9"]),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "graph.grid",
        fused_netlist([[dc("a", "input0", "output")]], grid=(2, 1), grid_loc=(9, 0)),
        fused_netlist([[dc("a", "input0", "output")]], grid=(2, 1), grid_loc=(8, 0)),
    ),
    (
        "graph.core_overlap",
        fused_netlist(
            [[dc("a", "input0", "output")]],
            extra_ops="    op1: {type: exp, grid_loc: [0, 0], grid_size: [1, 1], "
            "inputs: [in0], t: 1, mblock: [1, 1], ublock: [1, 1]}\n",
        ),
        fused_netlist(
            [[dc("a", "input0", "output")]],
            extra_ops="    op1: {type: exp, grid_loc: [0, 1], grid_size: [1, 1], "
            "inputs: [in0], t: 1, mblock: [1, 1], ublock: [1, 1]}\n",
        ),
    ),
    (
        "graph.program_graphs",
        fused_netlist([[dc("a", "input0", "output")]]).replace("graph_name: graph0", "graph_name: graph9"),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "graph.cycle",
        fused_netlist([[dc("a", "input0", "output")]], extra_ops=graph_ops(("exp", "op2"), ("exp", "op1"))),
        fused_netlist([[dc("a", "input0", "output")]], extra_ops=graph_ops(("exp", "in0"), ("exp", "op1"))),
    ),
    (
        "ops.graph_arity",
        fused_netlist([[dc("a", "input0", "output")]], extra_ops=graph_ops(("add", "in0"))),
        fused_netlist([[dc("a", "input0", "output")]], extra_ops=graph_ops(("add", "in0, in1"))),
    ),
    (
        "shapes.inputs",
        fused_netlist(
            [[dc("a", "input0", "output")]], extra_ops=graph_ops(("exp", "in0", {"mblock": "[2, 1]"}))
        ),
        fused_netlist(
            [[dc("a", "input0", "output")]],
            extra_ops=graph_ops(("exp", "in0", {"mblock": "[2, 1]", "input_0_tms": "[broadcast: {r: 2}]"})),
        ),
    ),
    (
        "shapes.matmul_inner",
        fused_netlist(
            [[dc("a", "input0", "output")]],
            extra_ops=graph_ops(("matmul", "in0, in1", {"attributes": "{m_k: 2, u_kt: 1}"})),
        ),
        fused_netlist(
            [[dc("a", "input0", "output")]],
            extra_ops=graph_ops(("matmul", "in0, in1", {"attributes": "{m_k: 1, u_kt: 1}"})),
        ),
    ),
    (
        "shapes.output_queue",
        fused_netlist(
            [[dc("a", "input0", "output")]],
            extra_ops=graph_ops(("exp", "in0")),
            extra_queues=queue("out1", "op1", 2, grid=(2, 1)),
        ),
        fused_netlist(
            [[dc("a", "input0", "output")]],
            extra_ops=graph_ops(("exp", "in0")),
            extra_queues=queue("out1", "op1", 2),
        ),
    ),
    (
        "tms.unknown",
        fused_netlist([[dc("a", "input0", "output")]], op_extra="      input_0_tms: [frobnicate: 2]\n"),
        fused_netlist([[dc("a", "input0", "output")]], op_extra="      input_0_tms: [broadcast: {z: 1}]\n"),
    ),
    (
        "queues.buffers",
        fused_netlist([[dc("a", "input0", "output")]], dram={"out0": "[[1, 0x10000000], [1, 0x11000000]]"}),
        fused_netlist([[dc("a", "input0", "output")]]),
    ),
    (
        "queues.overlap",
        fused_netlist([[dc("a", "input0", "output")]], dram={"in1": "[[0, 0x10000400]]"}),
        fused_netlist([[dc("a", "input0", "output")]], dram={"in1": "[[0, 0x10000840]]"}),
    ),
]


@pytest.mark.parametrize(("rule_id", "bad", "fixed"), CASES, ids=[c[0] for c in CASES])
def test_violating_netlist_is_reported_with_the_rule(rule_id: str, bad: str, fixed: str) -> None:
    found = {v.rule for v in check_netlist(bad, min_severity="info")}
    assert rule_by_id(rule_id).id in found, f"expected {rule_id}, got {sorted(found)}"


@pytest.mark.parametrize(("rule_id", "bad", "fixed"), CASES, ids=[c[0] for c in CASES])
def test_minimal_fix_is_accepted(rule_id: str, bad: str, fixed: str) -> None:
    assert check_netlist(fixed, min_severity="info") == []


@pytest.mark.parametrize(("rule_id", "bad", "fixed"), CASES, ids=[c[0] for c in CASES])
def test_only_errors_fail_by_default(rule_id: str, bad: str, fixed: str) -> None:
    everything = check_netlist(bad, min_severity="info")
    assert check_netlist(bad) == [v for v in everything if v.severity == "error"]
    assert check_netlist(bad, strict=True) == [v for v in everything if v.severity != "info"]


def test_every_rule_and_alias_has_a_case() -> None:
    covered = {c[0] for c in CASES}
    expected = {rule.id for rule in RULES} | {alias for rule in RULES for alias in rule.aliases}
    assert expected - covered == set()


def test_every_seed_rule_id_exists() -> None:
    seed_ids = (
        [f"general.{n}" for n in range(1, 10)]
        + [f"unsupported.{n}" for n in range(1, 13)]
        + [f"matmul.{n}" for n in range(12, 19)]
        + [f"broadcast.{n}" for n in range(19, 26)]
        + [f"int.{n}" for n in range(1, 10)]
    )
    for rule_id in seed_ids:
        assert rule_by_id(rule_id).doc.startswith("Seed"), rule_id
