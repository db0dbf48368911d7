"""Bad netlist arguments and hostile netlists: named errors or violations, refused before
any work (small limits keep these fast; nothing here asserts a time)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from buda.builders import fused_netlist, sub

import nkigym_graph as ng
from nkigym_graph.buda import NetlistError, NetlistEvaluationError, NetlistLimits, load_netlist
from nkigym_graph.cli import main
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.text import write_program

VALID = fused_netlist([[sub("a", "datacopy", ["input0"], "output")]])


def test_the_small_netlist_is_valid() -> None:
    assert ng.check_netlist(VALID) == []


@pytest.mark.parametrize(
    ("netlist", "message"),
    [
        (
            None,
            "netlist: must be YAML text \\(str\\), a pathlib.Path, a parsed map or a Netlist, got NoneType",
        ),
        (5, "netlist: must be YAML text .* got int 5"),
        (VALID.encode(), "netlist: must be YAML text .* got bytes .*decode bytes first"),
        ("x: " + "y" * 300, "missing or empty section\\(s\\) \\['queues', 'graphs'\\]"),
        ("hello: world", "missing or empty section\\(s\\) \\['queues', 'graphs'\\]"),
        ("devices: {arch: grayskull}\n", "missing or empty section\\(s\\) \\['queues', 'graphs'\\]"),
        (
            "queues: {}\ngraphs: {}\nprograms: []\n",
            "missing or empty section\\(s\\) \\['queues', 'graphs'\\]",
        ),
        ("netlist.yaml", "single value \\(text\\) \\(a str is netlist text: read a file with pathlib.Path"),
        (
            VALID.replace("in_df: [", "in_df: [Float99, ", 1),
            "field 'in_df': 'Float99' is not a Buda data format",
        ),
        (VALID.replace("out_df: Float16_b", "out_df: Float99", 1), "field 'out_df': 'Float99' is not a Buda"),
        (VALID.replace("t: 1,", "t: -1,", 1), "field 't': -1 is outside 1..4096 \\(NetlistLimits.t\\)"),
        (
            VALID.replace("grid_size: [1, 1]", "grid_size: [-1, -1]", 1),
            "field 'grid_size': -1 is outside 1..14",
        ),
        (VALID.replace("mblock: [1, 1]", "mblock: [0, 1]", 1), "field 'mblock': 0 is outside 1..1024"),
        (VALID.replace("grid_size: [1, 1]", "grid_size: [100000, 100000]", 1), "100000 is outside 1..14"),
        ("def f(a):\n    return a\n", "this is a program .* not a netlist"),
    ],
)
def test_bad_netlists_are_named_errors(netlist: object, message: str) -> None:
    with pytest.raises(NetlistError, match=message):
        ng.check_netlist(netlist)  # type: ignore[arg-type]


def test_evaluation_refuses_a_tensor_past_the_tile_limit() -> None:
    text = VALID.replace("mblock: [1, 1]", "mblock: [8, 8]", 1)
    with pytest.raises(
        NetlistError, match=r"queue 'in0': 64 tiles .* more than NetlistLimits.tensor_tiles = 16"
    ):
        ng.evaluate_netlist(text, {}, limits=NetlistLimits(tensor_tiles=16))


def test_evaluation_refuses_a_broadcast_past_the_tile_limit() -> None:
    tms = "inputs: [in0, in1]\n      input_0_tms: [broadcast: {z: 100000}]\n"
    text = VALID.replace("inputs: [in0, in1]\n", tms)
    ng.check_netlist(text)  # checking holds no tensors: it does not refuse the size
    with pytest.raises(
        NetlistError, match=r"field 'input_0_tms': 100000 tiles \('in0' after its broadcasts\)"
    ):
        ng.evaluate_netlist(text, {})


def _outer_product_netlist(tiles: int, fused: bool) -> str:
    """A [tiles x 1] by [1 x tiles] tile matmul whose op declares one tile: its product
    (tiles x tiles tiles) is far larger than any tensor the netlist holds."""
    queue = "{{type: queue, input: {src}, entries: 1, grid_size: [1, 1], t: 1, mblock: {mb}, ublock: [1, 1], "
    queue += "df: Float32, target_device: 0, loc: dram, dram: [[{ch}, 0x10000000]]}}"
    queues = {"a": ("HOST", f"[{tiles}, 1]", 0), "b": ("HOST", f"[1, {tiles}]", 1), "c": ("mm", "[1, 1]", 2)}
    lines = [f"  {name}: " + queue.format(src=src, mb=mb, ch=ch) for name, (src, mb, ch) in queues.items()]
    attributes = "{fused_op_id: 0}" if fused else "{m_k: 1, u_kt: 1}"
    op = (
        f"    mm: {{type: {'fused_op' if fused else 'matmul'}, grid_loc: [0, 0], grid_size: [1, 1], "
        "inputs: [a, b], in_df: [Float32, Float32], t: 1, mblock: [1, 1], ublock: [1, 1], acc_df: Float32, "
        f"out_df: Float32, intermed_df: Float32, math_fidelity: HiFi4, attributes: {attributes}}}"
    )
    fused_ops = (
        "fused_ops:\n  0:\n    inputs: 2\n    intermediates: 0\n    schedules:\n"
        "      - - p: {type: matmul, inputs: [input0, input1], attributes: {m_k: 1, u_kt: 1}, "
        "mblock: [1, 1], ublock: [1, 1], output: output}\n"
    )
    return (
        "devices: {arch: wormhole_b0}\nqueues:\n" + "\n".join(lines) + "\ngraphs:\n  g:\n" + op
        + "\nprograms:\n  - run: [{execute: {graph_name: g}}]\n" + (fused_ops if fused else "")
    )  # fmt: skip


def _peak_bytes(function: Any) -> int:
    """The most memory ``function()`` held at once (numpy's arrays included)."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fused", [False, True], ids=["graph_op", "fused_op"])
def test_evaluation_refuses_a_matmul_product_past_the_tile_limit_before_computing_it(fused: bool) -> None:
    """The product of a [64 x 1] and a [1 x 64] tile matmul is 4096 tiles (32 MiB here;
    at 4096 tiles a side, a 128 GiB allocation and a bare MemoryError): it was computed
    before the op's declared shape was compared, past NetlistLimits.tensor_tiles."""
    text = _outer_product_netlist(64, fused)
    inputs = {"a": np.ones((64 * 32, 32)), "b": np.ones((32, 64 * 32))}
    limits = NetlistLimits(tensor_tiles=64)

    def evaluate() -> None:
        with pytest.raises(
            NetlistEvaluationError, match=r"op 'mm'.*4096 tiles.*NetlistLimits.tensor_tiles = 64"
        ):
            ng.evaluate_netlist(text, inputs, limits=limits)

    assert _peak_bytes(evaluate) < 8 * 2**20


def test_evaluation_refuses_a_fused_broadcast_past_the_tile_limit_before_computing_it() -> None:
    """A sub-op's broadcast factor was bounded, but not the tensor it spreads: a 64-tile
    intermediate spread 64 times (4096 tiles) was built before the shapes were compared."""
    schedules = [
        [sub("copy", "datacopy", ["input0"], "intermed0")],
        [sub("wide", "datacopy", ["intermed0"], "intermed1", mb=(1, 64), input_0_tms="[broadcast: {c: 64}]")],
        [
            sub(
                "tall",
                "datacopy",
                ["intermed1"],
                "output",
                input_0_tms="[broadcast: {r: 64}]",
                pop="[intermed1]",
            )
        ],
    ]
    text = fused_netlist(schedules, intermediates=2).replace(
        "output: intermed1}", "pop: [intermed0], output: intermed1}"
    )

    def evaluate() -> None:
        with pytest.raises(NetlistEvaluationError, match=r"sub-op 'tall'.*4096 tiles.*tensor_tiles = 64"):
            ng.evaluate_netlist(
                text,
                {"in0": np.ones((32, 32)), "in1": np.ones((32, 32))},
                limits=NetlistLimits(tensor_tiles=64),
            )

    assert _peak_bytes(evaluate) < 8 * 2**20


def test_evaluation_refuses_more_tiles_than_the_total_limit() -> None:
    with pytest.raises(
        NetlistError, match=r"its tensors hold 4 tiles, more than NetlistLimits.total_tiles = 3"
    ):
        ng.evaluate_netlist(VALID, {}, limits=NetlistLimits(total_tiles=3))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"arch": 5},
            "arch must be an architecture name \\(grayskull, .*\\) or a Tenstorrent Target, got int 5",
        ),
        ({"arch": "nope"}, "unknown architecture 'nope'"),
        ({"arch": ng.TRN2}, "target trn2 is not a Tenstorrent architecture"),
        ({"ignore": "general.3"}, "ignore must be a list of rule ids, got str"),
        ({"ignore": ["general.99"]}, "no rule 'general.99'"),
        ({"limits": 5}, "limits must be a NetlistLimits, got int 5"),
        ({"path": 5}, "pass the netlist or path=, not both"),
    ],
)
def test_bad_check_arguments_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(NetlistError, match=message):
        ng.check_netlist(VALID, **kwargs)


def test_path_keyword_and_path_objects_read_files(tmp_path: Path) -> None:
    path = tmp_path / "n.yaml"
    path.write_text(VALID)
    assert ng.check_netlist(path) == ng.check_netlist(path=str(path)) == ng.check_netlist(path=path) == []
    with pytest.raises(NetlistError, match=r"path must be a str or pathlib.Path, got int 5"):
        ng.check_netlist(path=5)  # type: ignore[arg-type]
    with pytest.raises(NetlistError, match="cannot read netlist file"):
        ng.check_netlist(path=tmp_path / "absent.yaml")


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (None, "inputs: must be a map of host queue name to array, got NoneType None"),
        ([1, 2], "inputs: must be a map of host queue name to array, got list"),
        ({"in0": "abc", "in1": 0}, "input 'in0': is not a numeric array"),
        ({"nope": 0}, "input 'nope': is not a queue"),
        # numpy casts complex to real with only a ComplexWarning: the imaginary part was lost
        (
            {"in0": np.full((32, 32), 1 + 2j), "in1": 0},
            r"input 'in0': is complex \(complex128\); queues hold real numbers",
        ),
    ],
)
def test_bad_evaluation_inputs_are_named(inputs: object, message: str) -> None:
    with pytest.raises(NetlistEvaluationError, match=message):
        ng.evaluate_netlist(VALID, inputs)  # type: ignore[arg-type]


def _bomb(levels: int, use: str) -> str:
    """A "billion laughs" document: each anchor lists the previous one ten times."""
    lines = ["x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        lines.append(f"x{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n" + use.replace("*j", f"*a{levels - 1}") + "\n"


@pytest.mark.parametrize(
    "use",
    [
        "devices: {arch: *j}",
        "graphs:\n  g:\n    op0: {type: datacopy, inputs: *j, mblock: [1, 1], ublock: [1, 1]}",
    ],
)
def test_alias_bombs_are_refused_before_they_are_built(use: str) -> None:
    with pytest.raises(NetlistError, match="expands to more than 1000 YAML nodes"):
        load_netlist(_bomb(4, use), limits=NetlistLimits(yaml_nodes=1000))
    with pytest.raises(NetlistError, match=r"NetlistLimits.yaml_nodes"):  # 10^9 nodes, default limit
        ng.check_netlist(_bomb(9, use))


def test_an_alias_inside_itself_is_refused() -> None:
    with pytest.raises(NetlistError, match="an alias refers to a node inside itself"):
        load_netlist("queues: &q {self: *q}\ngraphs: {}\n")


def test_deeply_nested_yaml_is_a_netlist_error() -> None:
    with pytest.raises(NetlistError, match="invalid YAML"):
        load_netlist("queues: " + "[" * 5000 + "]" * 5000 + "\n")


def test_check_netlist_cli_refuses_a_program_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = write_program(tiled_matmul(128, 128, 128), tmp_path / "program.nkg")
    assert main(["check-netlist", str(program)]) == 2
    assert "this is a program" in capsys.readouterr().err


def test_text_past_the_character_limit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NetlistError, match=r"\d+ characters is more than NetlistLimits.text_chars = 100"):
        ng.check_netlist(VALID, limits=NetlistLimits(text_chars=100))
    path = tmp_path / "big.yaml"
    path.write_text(VALID)
    with pytest.raises(
        NetlistError, match=r"\d+ bytes is more than NetlistLimits.text_chars = 100 characters"
    ):
        ng.check_netlist(path, limits=NetlistLimits(text_chars=100))


@pytest.mark.parametrize(
    ("tms", "message"),
    [
        ("[tile_broadcast: q]", r"tile_broadcast copies row 0 \(r\) or column 0 \(c\), got 'q'"),
        ("[tile_broadcast: 5]", r"tile_broadcast copies row 0 \(r\) or column 0 \(c\), got 5"),
        ("[broadcast: {x: 2}]", "broadcast along r, c or z, got 'x'"),
    ],
)
def test_a_tm_along_no_dimension_is_a_load_error(tms: str, message: str) -> None:
    """The checker passed them and the evaluator refused them."""
    import nkigym_graph as ng

    program = ng.tile(lambda x: ng.activation(x, op="exp"), {"x": (64, 64)}, target=ng.WORMHOLE_B0)
    netlist = ng.emit_artifact(program, backend="buda").text
    text = netlist.replace("      inputs: [x]\n", f"      inputs: [x]\n      input_0_tms: {tms}\n")
    assert text != netlist
    with pytest.raises(ng.NetlistError, match=message):
        ng.check_netlist(text, strict=True)
