"""Search on Tenstorrent targets: the ``tenstorrent`` cost model (modeled time of the
netlist the Buda backend emits) ranks the programs, and the best one is emitted as a
netlist that checks clean (strict: no errors, no warnings) and evaluates, in numpy on
random inputs, to what the program computes.

The 1024^3 cases are the ones the project promises: search finds a program whose
modeled time beats the unsearched (tiled) one for a matmul and for matmul + bias + gelu.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nkigym_graph as ng
from nkigym_graph.buda import check_netlist
from nkigym_graph_plugins.buda_backend import run_netlist


def matmul(a: Any, b: Any) -> Any:
    return ng.nc_matmul(a, b)


def matmul_bias_gelu(a: Any, b: Any, bias: Any) -> Any:
    return ng.activation(ng.tensor_tensor(ng.nc_matmul(a, b), bias, op="add"), op="gelu")


def _gelu64(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def _expected(name: str, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """What the program computes, in float64 numpy."""
    product = inputs["a"].T @ inputs["b"]
    return product if name == "matmul" else _gelu64(product + inputs["bias"])


def _shapes(name: str, n: int) -> dict[str, tuple[int, int]]:
    shapes = {"a": (n, n), "b": (n, n)}
    return shapes if name == "matmul" else {**shapes, "bias": (n, n)}


FUNCTIONS = {"matmul": matmul, "matmul_bias_gelu": matmul_bias_gelu}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_search_at_1024_beats_the_tiled_program_and_its_netlist_checks_and_evaluates(name: str) -> None:
    program = ng.tile(FUNCTIONS[name], _shapes(name, 1024), target=ng.WORMHOLE_B0)
    root = ng.estimate(program)
    assert root.model == "tenstorrent" and root.feasible
    result = ng.search(program, seed=0, progress=False)
    assert result.root_cost.seconds == root.seconds
    assert result.cost.feasible
    assert result.cost.seconds < root.seconds  # modeled, the cost model's yardstick
    confirmation = result.netlist
    assert confirmation is not None and confirmation.arch == "wormhole_b0"
    assert confirmation.violations == () and confirmation.ok, str(confirmation)
    # independently of the confirmation: emit, check, and compare with float64 numpy
    artifact = ng.emit_artifact(result.best, backend="buda")
    assert check_netlist(artifact.parsed, ng.WORMHOLE_B0, strict=True) == []
    rng = np.random.default_rng(7)
    inputs = {key: rng.standard_normal(shape) for key, shape in _shapes(name, 1024).items()}
    got = next(iter(run_netlist(artifact, inputs).values()))
    want = _expected(name, inputs)
    # float32 queues and math on Wormhole B0: error well below a part in 10^4 of the output
    assert np.max(np.abs(got - want)) <= 1e-4 * np.max(np.abs(want))


@pytest.mark.parametrize("target", [ng.GRAYSKULL, ng.WORMHOLE_B0, ng.BLACKHOLE])
def test_search_and_estimate_work_on_every_tenstorrent_target(target: ng.Target) -> None:
    program = ng.tile(matmul_bias_gelu, _shapes("matmul_bias_gelu", 256), target=target, dtype="bfloat16")
    report = ng.estimate(program)
    assert report.model == "tenstorrent" and report.target == target.name and report.feasible
    assert "modeled" in str(report)
    result = ng.search(program, seed=0, progress=False, budget=12)
    assert result.cost.seconds <= result.root_cost.seconds
    assert result.netlist is not None and result.netlist.ok, str(result.netlist)
    artifact = ng.emit_artifact(result.best, backend="buda")
    formats = {queue["df"] for queue in artifact.parsed["queues"].values()}
    assert formats == {"Float16_b"}  # a bfloat16 program's queues


def test_search_confirmation_can_be_switched_off() -> None:
    program = ng.tile(matmul, _shapes("matmul", 64), target=ng.WORMHOLE_B0)
    assert ng.search(program, progress=False, confirm=False).netlist is None


def test_a_process_pool_search_gives_the_in_process_result() -> None:
    from concurrent.futures import ProcessPoolExecutor

    program = ng.tile(matmul_bias_gelu, _shapes("matmul_bias_gelu", 128), target=ng.WORMHOLE_B0)
    alone = ng.search(program, strategy="beam", seed=0, progress=False, confirm=False)
    with ProcessPoolExecutor(max_workers=2) as pool:
        spread = ng.search(program, strategy="beam", seed=0, executor=pool, progress=False, confirm=False)
    assert spread.best == alone.best and spread.cost.seconds == alone.cost.seconds


def test_a_tenstorrent_report_names_the_cores_l1_not_sbuf_or_psum() -> None:
    program = ng.tile(matmul, {"a": (256, 256), "b": (256, 256)}, target="wormhole_b0")
    report = ng.estimate(program)
    text = str(report)
    assert report.memories == ("L1", "") and report.memory_per == "core"
    assert f"L1 {report.peak_sbuf_bytes / 1024:.1f}/{report.sbuf_capacity / 1024:.0f} KiB per core" in text
    assert "SBUF" not in text and "PSUM" not in text and "partition" not in text
    trn2 = str(ng.estimate(ng.tile(matmul, {"a": (256, 256), "b": (256, 256)})))
    assert "SBUF" in trn2 and "PSUM" in trn2 and "KiB per partition" in trn2
