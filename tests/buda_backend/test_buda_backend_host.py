"""Filling host queues and reading outputs; DRAM buffers."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from buda_backend.programs import CASES, MORE_CASES

import nkigym_graph as ng
from nkigym_graph.buda.rules.queues import buffer_bytes
from nkigym_graph.ir.targets import WORMHOLE_B0
from nkigym_graph_plugins.buda_backend import BudaEmitError, netlist_inputs, program_outputs, run_netlist


@pytest.fixture
def ragged() -> ng.Artifact:
    return ng.emit_artifact(MORE_CASES["layernorm_ragged"].program(WORMHOLE_B0), backend="buda")


def test_parameters_are_padded_to_whole_tiles_and_constants_filled(
    ragged: ng.Artifact, rng: np.random.Generator
) -> None:
    x = rng.standard_normal((48, 40))
    queues = netlist_inputs(ragged, {"x": x, "ones": np.ones((1, 40))})
    assert queues["x"].shape == (64, 64)
    np.testing.assert_array_equal(queues["x"][:48, :40], x)
    assert not queues["x"][48:].any() and not queues["x"][:, 40:].any()
    assert queues["ones"].shape == (32, 64) and queues["ones"].sum() == 40
    column = next(
        name for name, h in ragged.facts["host_queues"].items() if h.get("constant") == "column_ones"
    )
    assert queues[column].shape == (64, 32)
    assert queues[column][:40, 0].all() and queues[column].sum() == 40
    fills = {h["value"]: queues[name] for name, h in ragged.facts["host_queues"].items() if "value" in h}
    assert set(fills) == {1.0 / 40, 1e-5}
    assert all(q.shape == (32, 32) and (q == v).all() for v, q in fills.items())


def test_outputs_are_cropped_to_the_program_shape(ragged: ng.Artifact) -> None:
    padded = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    (output,) = program_outputs(ragged, {"output": padded}).values()
    np.testing.assert_array_equal(output, padded[:48, :40])


def test_a_stationary_parameter_is_transposed_on_the_host(rng: np.random.Generator) -> None:
    artifact = ng.emit_artifact(CASES["matmul"].program(WORMHOLE_B0), backend="buda")
    a, b = rng.standard_normal((128, 64)), rng.standard_normal((128, 96))
    queues = netlist_inputs(artifact, {"a": a, "b": b})
    np.testing.assert_array_equal(queues["a_t"], a.T)
    np.testing.assert_array_equal(queues["b"], b)


def test_inputs_must_be_the_programs_parameters_with_their_shapes(ragged: ng.Artifact) -> None:
    with pytest.raises(BudaEmitError, match=r"missing \['ones'\], unexpected \['y'\]"):
        netlist_inputs(ragged, {"x": np.zeros((48, 40)), "y": np.zeros(1)})
    with pytest.raises(BudaEmitError, match=r"input 'x' has shape \(40, 48\), expected \(48, 40\)"):
        netlist_inputs(ragged, {"x": np.zeros((40, 48)), "ones": np.ones((1, 40))})


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            [np.zeros((128, 64)), np.zeros((128, 96))],
            r"inputs must be a map of parameter name to array, got list",
        ),
        ({"a": "x", "b": np.zeros((128, 96))}, r"input 'a' is not a numeric array: could not convert"),
        ({"a": np.array([[object()]]), "b": np.zeros((128, 96))}, r"input 'a' is not a numeric array"),
        ({"a": np.full((128, 64), 1j), "b": np.zeros((128, 96))}, r"input 'a' is complex"),
    ],
)
def test_run_netlist_names_an_input_that_is_no_real_array(inputs: object, message: str) -> None:
    """A list of arrays was a bare TypeError ("unhashable type"), a string or object array
    a bare ValueError / TypeError from numpy, and a complex array lost its imaginary part
    with only a ComplexWarning."""
    artifact = ng.emit_artifact(CASES["matmul"].program(WORMHOLE_B0), backend="buda")
    with pytest.raises(BudaEmitError, match=message):
        run_netlist(artifact, inputs)  # type: ignore[arg-type]


def test_dram_buffers_are_hex_and_never_overlap_in_a_channel() -> None:
    artifact = ng.emit_artifact(CASES["layernorm_like"].program(WORMHOLE_B0), backend="buda")
    spans: dict[int, list[tuple[int, int]]] = {}
    queues = ng.load_netlist(artifact.parsed).queues
    for queue in queues.values():
        for channel, address in queue.dram:
            spans.setdefault(channel, []).append((address, address + buffer_bytes(queue)))
    for items in spans.values():
        items.sort()
        assert all(end <= start for (_, end), (start, _) in itertools.pairwise(items))
    written = re.findall(r"\[\d+, (0x[0-9a-f]+)\]", artifact.text)
    assert len(written) == sum(len(q.dram) for q in queues.values())
