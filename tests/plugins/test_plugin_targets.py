"""A target a plugin registers works end to end: found by name, tiled for, verified
against its own limits, interpreted, saturated, and kept in program files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import nkigym_graph as ng
from nkigym_graph.plugin.registry import registered_targets

HALF = ng.Target(
    name="half_core",
    family="neuron",
    partition_size=64,
    tile_sizes={"partition": 64, "M": 64, "K": 64, "N": 64, "free": 64},
    op_limits={
        "load": {"partition": 64},
        "store": {"partition": 64},
        "nc_matmul": {"M": 64, "K": 64, "N": 128},
        "nc_transpose": {"partition": 64, "free": 64},
        "activation": {"partition": 64},
        "tensor_tensor": {"partition": 64},
        "tensor_scalar": {"partition": 64},
        "tensor_reduce": {"partition": 64},
    },
    sbuf_bytes_per_partition=ng.TRN2.sbuf_bytes_per_partition,
    psum_bytes_per_partition=ng.TRN2.psum_bytes_per_partition,
    facts=ng.TRN2.facts,
    hbm_bytes=ng.TRN2.hbm_bytes,
)
"""A NeuronCore with half the partitions and a 128-wide matmul N."""


class HalfCorePlugin:
    @ng.hookimpl
    def nkigym_graph_register_targets(self) -> list[ng.Target]:
        return [HALF]


@pytest.fixture
def half_core() -> Iterator[ng.Target]:
    plugin = HalfCorePlugin()
    ng.register_plugin(plugin, name="half_core_plugin")
    try:
        yield HALF
    finally:
        ng.unregister_plugin(plugin)


def matmul_tanh(a, b):
    return ng.activation(ng.nc_matmul(a, b), op="tanh")


SHAPES = {"a": (128, 128), "b": (128, 256)}


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {name: rng.standard_normal(shape) for name, shape in SHAPES.items()}


def _partitions(program: ng.Program, op: str) -> set[int]:
    """Partition extents of what ``op`` statements write."""
    found = set()
    for node in program.statements_of(op):
        start, stop = program[node].dst.slices[0]
        found.add(stop - start)
    return found


def test_a_plugin_target_is_found_by_name(half_core: ng.Target) -> None:
    assert registered_targets()["half_core"] is half_core
    assert ng.get_target("half_core") is half_core
    assert ng.get_target("HALF_CORE") is half_core


def test_tile_verify_and_interpret_on_a_plugin_target(half_core: ng.Target) -> None:
    program = ng.tile(matmul_tanh, SHAPES, dtype=np.float64, target="half_core")
    assert program.target is half_core
    assert _partitions(program, "load") == {64}  # the plugin target's tile, not trn2's 128
    # 2 x 2 x 4 matmul tiles of 64 (K, M, N): 16 matmuls
    assert len(program.statements_of("nc_matmul")) == 16
    arrays = _inputs()
    expected = np.tanh(arrays["a"].T @ arrays["b"])
    np.testing.assert_allclose(ng.interpret(program, **arrays), expected, rtol=1e-9, atol=1e-12)


def test_saturation_keeps_to_the_plugin_targets_limits(half_core: ng.Target) -> None:
    program = ng.tile(matmul_tanh, SHAPES, dtype=np.float64, target="half_core")
    saturated = ng.saturate(program, check=True)
    assert saturated.target is half_core
    assert len(saturated) < len(program)
    widths = {
        stop - start
        for node in saturated.statements_of("nc_matmul")
        for start, stop in [saturated[node].dst.slices[1]]
    }
    assert max(widths) == 128  # merged up to half_core's N limit, not trn2's 512
    arrays = _inputs()
    expected = np.tanh(arrays["a"].T @ arrays["b"])
    np.testing.assert_allclose(ng.interpret(saturated, **arrays), expected, rtol=1e-9, atol=1e-12)


WIDE = """
def f(a, b):
    output = nkigym.ndarray((128, 128), dtype=np.float32)
    tensor_0 = a[0:128, 0:128]
    tensor_1 = b[0:128, 0:128]
    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    output[0:128, 0:128] = tensor_2
    return output
"""


def test_verification_uses_the_plugin_targets_limits(half_core: ng.Target) -> None:
    assert len(ng.parse_program(WIDE)) == 5  # fits trn2
    with pytest.raises(ng.VerificationError, match=r"half_core"):
        ng.parse_program(WIDE, target="half_core")


def test_a_program_file_keeps_a_plugin_target(half_core: ng.Target, tmp_path: Path) -> None:
    program = ng.tile(matmul_tanh, SHAPES, target="half_core")
    path = ng.write_program(program, tmp_path / "p.nkg")
    assert "target=half_core" in path.read_text().splitlines()[0]
    again = ng.read_program(path)
    assert again.target is half_core and again == program


def test_an_unregistered_target_is_refused_by_name(half_core: ng.Target) -> None:
    with pytest.raises(ng.PluginError, match=r"unknown target 'quarter_core'; known targets: .*half_core"):
        ng.tile(matmul_tanh, SHAPES, target="quarter_core")


def test_the_target_goes_with_its_plugin() -> None:
    plugin = HalfCorePlugin()
    ng.register_plugin(plugin)
    assert ng.get_target("half_core") is HALF
    ng.unregister_plugin(plugin)
    with pytest.raises(ng.PluginError, match=r"unknown target 'half_core'"):
        ng.get_target("half_core")


def test_a_program_on_a_plugin_target_pickles_to_the_same_target(half_core: ng.Target) -> None:
    """Process pools and cluster executors send programs by pickle: a plugin target
    comes back as the registered target (or, in a process that never saw it, an equal
    one), not as an unknown name."""
    import pickle

    program = ng.tile(matmul_tanh, SHAPES, target="half_core")
    again = pickle.loads(pickle.dumps(program))
    assert again.target is half_core and again == program
    assert pickle.loads(pickle.dumps(half_core)) is half_core
    assert pickle.loads(pickle.dumps(ng.TRN2)) is ng.TRN2


def test_a_target_unknown_to_the_unpickling_process_is_rebuilt_from_its_fields() -> None:
    import pickle

    from nkigym_graph.ir import targets

    data = pickle.dumps(HALF)
    saved = dict(targets._KNOWN)
    targets._KNOWN.clear()  # as in a process that never built HALF
    try:
        rebuilt = pickle.loads(data)
        assert pickle.loads(pickle.dumps(rebuilt)) is rebuilt  # then known in this process
    finally:
        targets._KNOWN.clear()
        targets._KNOWN.update(saved)
    assert rebuilt is not HALF and rebuilt.name == "half_core"
    assert rebuilt.op_limits == HALF.op_limits and rebuilt.facts == HALF.facts


def test_search_with_a_process_pool_on_a_plugin_target(half_core: ng.Target) -> None:
    from concurrent.futures import ProcessPoolExecutor

    program = ng.tile(matmul_tanh, SHAPES, target="half_core")
    with ProcessPoolExecutor(max_workers=2) as pool:
        spread = ng.search(program, strategy="beam", seed=0, budget=8, executor=pool, confirm=False)
    assert spread.best.target is half_core
    assert spread.best == ng.search(program, strategy="beam", seed=0, budget=8, confirm=False).best
