"""Reading netlists: YAML styles seen in real netlists, repeated keys, errors with lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from buda.builders import fused_netlist, sub

from nkigym_graph.buda import Netlist, NetlistError, Tm, check_netlist, load_netlist
from nkigym_graph.errors import NkigymError

BLOCK_STYLE = """\
# A netlist in block style, with comments, hex addresses, anchors and a merge key.
devices:
  arch: [grayskull, wormhole_b0]   # either arch
queues:
  in0:
    type: queue
    input: HOST
    entries: 2
    grid_size: [2, 1]
    t: 1
    mblock: [1, 1]
    ublock: [1, 1]
    df: Float16_b
    target_device: 0
    loc: dram
    dram:
    - [0, 0x10000000]
    - [0, 0x10008840]
  out0: &queue_defaults
    {type: queue, input: op0, entries: 2, grid_size: [2, 1], t: 1, mblock: [1, 1], ublock: [1, 1],
     df: Float16_b, target_device: 0, loc: dram, dram: [[1, 0x10000000], [1, 0x10008840]]}
  spare:
    <<: *queue_defaults
    input: HOST
    dram: [[2, 0x20000000], [2, 0x20010000]]
graphs:
  g0:
    target_device: 0
    input_count: 2
    op0: {type: exp, grid_loc: [0, 0], grid_size: [2, 1], inputs: [in0], t: 1,
          mblock: [1, 1], ublock: [1, 1], in_df: [Float16_b], out_df: Float16_b,
          acc_df: Float16, intermed_df: Float16_b, ublock_order: r, math_fidelity: HiFi3}
programs:
  - run: [{loop: 2}, {execute: {graph_name: g0}}, endloop]
"""


def test_block_flow_comments_hex_anchors() -> None:
    netlist = load_netlist(BLOCK_STYLE)
    assert netlist.arch_names == ("grayskull", "wormhole_b0")
    assert netlist.queues["in0"].dram == ((0, 0x10000000), (0, 0x10008840))
    assert netlist.queues["spare"].input == "HOST"
    assert netlist.queues["spare"].df == "Float16_b"  # from the anchor via the merge key
    assert netlist.queues["spare"].dram[0] == (2, 0x20000000)
    assert netlist.duplicates == ()  # keys given next to a merge key override it, no repeat
    op = netlist.op("op0")
    assert op is netlist.ops("g0")["op0"]
    assert op is not None and op.shape == (1, 64, 32)
    assert [q.name for q in netlist.output_queues()] == ["out0"]
    assert {q.name for q in netlist.host_queues()} == {"in0", "spare"}
    assert check_netlist(netlist) == []


def test_repeated_fields_last_wins_but_tms_accumulate() -> None:
    text = fused_netlist(
        [[sub("a", "datacopy", ["input0"], "output")]],
        op_extra="      input_0_tms: [broadcast: {c: 2}]\n      input_0_tms:\n"
        "      input_1_tms: None\n      math_fidelity: LoFi\n      input_1_tms: [transpose]\n",
    )
    op = load_netlist(text).op("op0")
    assert op is not None
    assert op.math_fidelity == "LoFi"  # a repeated field: the last value wins
    assert op.input_tms(0) == (Tm("broadcast", "c", 2),)  # a null repeat adds nothing
    assert op.input_tms(1) == (Tm("transpose"),)


def test_repeated_queue_name_is_reported() -> None:
    text = BLOCK_STYLE.replace("  spare:", "  in0:")
    netlist = load_netlist(text)
    (section, duplicate) = netlist.duplicates[0]
    assert (section, duplicate.key) == ("queues", "in0")
    assert duplicate.first_line < duplicate.line
    assert "names.duplicate_definition" in {v.rule for v in check_netlist(netlist)}


def test_fused_op_ids_and_sub_op_helpers() -> None:
    text = fused_netlist(
        [
            [sub("m", "matmul", ["input0", "input1"], "intermed0", attributes="{m_k: 1, u_kt: 1}")],
            [sub("d", "datacopy", ["intermed0"], "output", pop="[intermed0]")],
        ]
    )
    netlist = load_netlist(text)
    fused = netlist.fused_op(0)
    assert fused is netlist.fused_op("0")
    assert [s.name for s in netlist.sub_ops(0, 1)] == ["d"]
    matmul = fused.sub_op("m")
    assert matmul is not None and matmul.is_matmul
    assert netlist.instances(0) == [netlist.op("op0")]
    with pytest.raises(NetlistError, match="no fused op with id '3'"):
        netlist.fused_op(3)
    with pytest.raises(NetlistError, match="no schedule 2"):
        netlist.sub_ops(0, 2)


def test_path_str_dict_and_netlist_sources(tmp_path: Path) -> None:
    path = tmp_path / "n.yaml"
    path.write_text(BLOCK_STYLE)
    from_path = load_netlist(path)
    from_str_path = load_netlist(path=str(path))
    assert from_path.source == from_str_path.source == load_netlist(path=path).source == str(path)
    from_dict = load_netlist(load_netlist(BLOCK_STYLE).data)
    assert isinstance(from_dict, Netlist) and set(from_dict.queues) == set(from_path.queues)
    assert load_netlist(from_path) is from_path


def test_a_str_is_always_text_never_a_path(tmp_path: Path) -> None:
    path = tmp_path / "n.yaml"
    path.write_text(BLOCK_STYLE)
    with pytest.raises(
        NetlistError, match=r"map of sections, got a single value \(text\) \(a str is netlist text"
    ):
        load_netlist(str(path))


def test_bad_yaml_names_the_line() -> None:
    text = "devices:\n  arch: grayskull\nqueues:\n  in0: {type: queue, input: HOST\n"
    with pytest.raises(NetlistError, match=r"line \d+.*invalid YAML") as info:
        load_netlist(text)
    assert info.value.line >= 4
    assert isinstance(info.value, NkigymError)


def test_wrong_field_shape_names_the_place_and_line() -> None:
    text = fused_netlist([[sub("a", "datacopy", ["input0"], "output")]]).replace(
        "mblock: [1, 1], ublock: [1, 1], output: output", "mblock: [1], ublock: [1, 1], output: output"
    )
    with pytest.raises(NetlistError, match=r"fused op 0, schedule 0, sub-op 'a' field 'mblock'") as info:
        load_netlist(text)
    assert (
        info.value.line
        == text.splitlines().index(next(line for line in text.splitlines() if "mblock: [1]," in line)) + 1
    )


def test_sub_op_must_be_a_one_key_map() -> None:
    text = fused_netlist([[sub("a", "datacopy", ["input0"], "output")]])
    two_keys = text.replace("- - a: {", "- - {b: 1, a: {").replace("output: output}", "output: output}}")
    with pytest.raises(NetlistError, match="a sub-op must be a one-key map"):
        load_netlist(two_keys)


def test_missing_file_is_a_netlist_error(tmp_path: Path) -> None:
    with pytest.raises(NetlistError, match="cannot read netlist file"):
        load_netlist(tmp_path / "missing.yaml")
    with pytest.raises(NetlistError, match="must be a map"):
        load_netlist("- just\n- a list\n")


@pytest.mark.parametrize(
    ("text", "held"),
    [("- a\n- b\n", "a list"), ("42\n", r"a single value \(int\)"), ("# nothing\n", "nothing")],
)
def test_a_file_that_is_not_a_map_says_what_it_holds(tmp_path: Path, text: str, held: str) -> None:
    """Read from a file: no advice about reading files, and YAML's own types (a marked
    list) never show."""
    path = tmp_path / "g.nkg"
    path.write_text(text)
    with pytest.raises(NetlistError, match=f"must be a map of sections, got {held}$"):
        load_netlist(path)
