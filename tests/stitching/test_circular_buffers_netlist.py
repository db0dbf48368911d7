"""Circular buffers of Buda netlists: one kernel per graph op."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import nkigym_graph as ng
from nkigym_graph.stitching import CircularBufferError, check_circular_buffers, circular_buffers

NETLISTS = Path(__file__).parent.parent / "buda" / "netlists"


def heads_netlist(weights: int, stitched: bool, arch: str = "wormhole_b0") -> dict[str, Any]:
    """One fused op computing ``x @ w_i`` for ``weights`` weights, summed in ``intermed1``.

    Stitched, the weights are one queue ``w`` read by every matmul sub-op (each at its own
    columns, which the kernel's compile-time args locate).
    """
    dims = {"mblock": [1, 1], "ublock": [1, 1]}
    tile = {"entries": 1, "grid_size": [1, 1], "t": 1, "df": "Float16_b", **dims}
    queues: dict[str, Any] = {"x": {"input": "HOST", **tile}}
    names = ["w"] if stitched else [f"w{i}" for i in range(weights)]
    for name in names:
        queues[name] = {"input": "HOST", **tile}
    queues["out"] = {"input": "heads", **tile}
    schedules = []
    for i in range(weights):
        weight = "input1" if stitched else f"input{i + 1}"
        schedule = [
            {f"mm{i}": {"type": "matmul", "inputs": ["input0", weight], "output": "intermed0", **dims}}
        ]
        schedule.append(
            {f"acc{i}": {"type": "add", "inputs": ["intermed0", "intermed1"], "output": "intermed1", **dims}}
        )
        schedules.append(schedule)
    schedules.append([{"copy": {"type": "datacopy", "inputs": ["intermed1"], "output": "output", **dims}}])
    op = {"type": "fused_op", "inputs": ["x", *names], "attributes": {"fused_op_id": 0}, **tile}
    return {
        "devices": {"arch": arch},
        "queues": queues,
        "graphs": {"g": {"heads": op}},
        "fused_ops": {0: {"inputs": 1 + len(names), "intermediates": 2, "schedules": schedules}},
    }


def test_fused_op_inputs_intermediates_and_output() -> None:
    count = circular_buffers(NETLISTS / "double_matmul_fused.yaml")
    (kernel,) = count.kernels
    assert (kernel.name, kernel.inputs, kernel.intermediates, kernel.outputs) == (
        "mm2",
        ("a", "b", "c"),
        ("intermed0", "intermed1"),
        ("mm2",),
    )
    assert (count.total, count.limit, count.arch, count.fits) == (6, 32, "wormhole_b0", True)
    assert kernel.weight_groups == (("b", "c"),)


def test_graph_ops_are_separate_kernels() -> None:
    count = circular_buffers(NETLISTS / "double_matmul_graph.yaml")
    assert {k.name: k.summary() for k in count.kernels} == {
        "mm2": "4 (2 inputs, 1 intermediate, 1 output)",
        "mm1": "4 (2 inputs, 1 intermediate, 1 output)",
    }
    assert (count.kernel, count.total, count.arch) == ("mm2", 4, "grayskull")


def test_the_first_known_arch_of_the_netlist_sets_the_limit() -> None:
    path = NETLISTS / "matmul_bias_relu.yaml"
    count = circular_buffers(path)
    assert (count.arch, count.limit, count.total, count.intermediates) == ("grayskull", 32, 5, 1)
    assert count.kernels[0].weight_groups == ()
    assert circular_buffers(path, "blackhole").limit == 64


def test_every_netlist_source_gives_the_same_count() -> None:
    path = NETLISTS / "double_matmul_fused.yaml"
    text = path.read_text()
    counts = {circular_buffers(source) for source in (path, text, ng.load_netlist(text))}
    assert len(counts) == 1


def test_too_many_weights_fail_on_wormhole_until_stitched() -> None:
    before = heads_netlist(30, stitched=False)
    assert circular_buffers(before).total == 34
    with pytest.raises(CircularBufferError) as caught:
        check_circular_buffers(before)
    message = str(caught.value)
    assert "kernel 'heads' needs 34 (31 inputs, 2 intermediates, 1 output)" in message
    assert "over the limit of 32 on wormhole_b0" in message
    assert "stitch its matmul weights (w0, w1," in message and "free 29, leaving 5, which fits" in message
    assert check_circular_buffers(before, "blackhole").fits
    after = check_circular_buffers(heads_netlist(30, stitched=True))
    assert (after.inputs, after.total, after.fits) == (2, 5, True)


def test_too_many_weights_even_for_blackhole() -> None:
    with pytest.raises(CircularBufferError, match=r"needs 66 .* over the limit of 64 on blackhole"):
        check_circular_buffers(heads_netlist(62, stitched=False, arch="blackhole"))


def test_netlist_errors_name_the_problem() -> None:
    broken = heads_netlist(2, stitched=False)
    broken["graphs"]["g"]["heads"]["attributes"]["fused_op_id"] = 7
    with pytest.raises(
        CircularBufferError, match=r"op 'heads' .* runs fused op '7', which .* does not define"
    ):
        circular_buffers(broken)
    with pytest.raises(
        CircularBufferError, match=r"names no known arch \(devices.arch: \['tt_future'\]\); pass arch="
    ):
        circular_buffers(heads_netlist(2, stitched=False, arch="tt_future"))
    assert circular_buffers(heads_netlist(2, stitched=False, arch="tt_future"), "wormhole_b0").total == 6
