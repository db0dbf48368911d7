"""Fuzzing: mutated program files and netlists either load (and check) or raise an
``NkigymError`` subclass, never another exception. Examples are bounded and netlists are
held to small limits, so this stays a few seconds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from mutations import mutated

import nkigym_graph as ng
from nkigym_graph.buda import NetlistLimits
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.text import dumps_program, loads_program

TESTS = Path(__file__).parent
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))

_tiled = tiled_matmul(256, 128, 256, tail="tanh")
PROGRAMS = [p.read_text() for p in sorted((TESTS / "fixtures" / "seeds").glob("*.txt"))] + [
    dumps_program(_tiled),
    dumps_program(ng.saturate(_tiled)),
    dumps_program(tiled_matmul(64, 64, 64, tile=32, target=ng.WORMHOLE_B0, dtype="bfloat16")),
]
PROGRAM_TOKENS = [
    "(", ")", "[", "]", ":", ",", "+", "-1", "0", "1e309", "inf", "nan", "99999999999999999999",
    "__import__('os').system('true')", "nkigym.", "np.", "*", "**", "lambda x: x", "0x10", "'", '"""',
    "    ", "return", "def ", "+=", "=", "tensor_0", "output", "dtype=", "op=", "x" * 200,
    "target=nope ", "params=a:1x2:float32 ", "fragment=1 ", "1+" * 2000 + "1",
]  # fmt: skip

_wormhole = tiled_matmul(64, 64, 96, tile=32, target=ng.WORMHOLE_B0)
NETLISTS = [p.read_text() for p in sorted((TESTS / "buda" / "netlists").glob("*.yaml"))] + [
    ng.emit_artifact(_wormhole, backend="buda", arch="wormhole_b0").text,
    ng.emit_artifact(_wormhole, backend="buda", arch="grayskull").text,
]
NETLIST_TOKENS = [
    "&a ", "*a", "<<: *a", "[", "]", "{", "}", ": ", "- ", "-1", "0", "100000", "1e309", ".nan",
    "Float99", "Float16_b", "!!python/object:os.system ", "!!binary ", "? ", "|", ">", "\t", "null",
    "~", "input_0_tms: [broadcast: {z: 1000}]", "hslice: 3", "transpose", "grid_size: [2, 2]",
    "t: 0", "type: fused_op", "fused_op_id: 9", "graph_name: nope", "loop: $x", "HOST", "x" * 200,
]  # fmt: skip
SMALL = NetlistLimits(yaml_nodes=20_000, t=64, block=64, tensor_tiles=256)


@FUZZ
@given(mutated(PROGRAMS, PROGRAM_TOKENS))
def test_mutated_program_files_parse_or_raise_a_named_error(text: str) -> None:
    try:
        program = loads_program(text)
    except ng.NkigymError:
        return
    assert loads_program(dumps_program(program)) == program


FRAGMENTS = [p.read_text() for p in sorted((TESTS / "fixtures" / "seeds").glob("000_*.txt"))]


@FUZZ
@given(mutated(FRAGMENTS, PROGRAM_TOKENS))
def test_mutated_fragments_parse_or_raise_a_named_error(text: str) -> None:
    try:
        fragment = ng.parse_fragment(text)
    except ng.NkigymError:
        return
    assert len(fragment) >= 0 and str(fragment)


@FUZZ
@given(mutated(NETLISTS, NETLIST_TOKENS))
def test_mutated_netlists_check_and_evaluate_or_raise_a_named_error(text: str) -> None:
    try:
        ng.check_netlist(text, limits=SMALL)
        netlist = ng.load_netlist(text, limits=SMALL)
        inputs = {q.name: np.ones(q.shape) for q in netlist.host_queues()}
        ng.evaluate_netlist(netlist, inputs)
    except ng.NkigymError:
        return
