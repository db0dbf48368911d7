"""``df="Bfp8_b"`` (CLI ``emit --df Bfp8_b``): queues and op data in block floating point.

The evaluator stores every queue and op output in Bfp8_b and a matmul's partial sums
(between its ``m_k`` steps) in the op's ``intermed_df`` (Float16_b), so the netlist equals
numpy with the same quantisation applied, exactly; compared with plain numpy it does not
meet the tolerance the Float16_b netlist meets.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import nkigym_graph as ng
from nkigym_graph.buda.quantize import quantize
from nkigym_graph.cli import main
from nkigym_graph_plugins.buda_backend import BudaEmitError, run_netlist
from nkigym_graph_plugins.tenstorrent_cost import TenstorrentCostModel

BF16 = ml_dtypes.bfloat16


def matmul(a, b):
    return ng.nc_matmul(a, b)


def matmul_relu(a, b):
    return ng.activation(ng.nc_matmul(a, b), op="relu")


def program(k: int, function=matmul, target=ng.WORMHOLE_B0) -> ng.Program:
    return ng.tile(function, {"a": (k, 128), "b": (k, 256)}, target=target)


def expected(a: np.ndarray, b: np.ndarray, m_k: int, u_kt: int) -> np.ndarray:
    """``a.T @ b`` as the netlist computes it: inputs stored in Bfp8_b (the host writes
    ``a`` transposed, so its blocks run along ``a``'s columns), ``m_k`` steps of ``u_kt``
    tiles with the partial sum stored as Float16_b between them, the result in Bfp8_b."""
    a_t, b = quantize(a.T, "Bfp8_b"), quantize(b, "Bfp8_b")
    step = 32 * u_kt
    partial = a_t[:, :step] @ b[:step]
    for k in range(1, m_k):
        partial = (
            quantize(partial, "Float16_b") + a_t[:, k * step : (k + 1) * step] @ b[k * step : (k + 1) * step]
        )
    return quantize(partial, "Bfp8_b")


@pytest.mark.parametrize("k", [128, 512])
@pytest.mark.parametrize("arch", ["wormhole_b0", "grayskull", "blackhole"])
def test_bfp8_b_netlist_equals_numpy_with_the_quantisation(k: int, arch: str) -> None:
    artifact = ng.emit_artifact(program(k), backend="buda", arch=arch, df="Bfp8_b")
    assert ng.check_netlist(artifact.text, strict=True) == []
    netlist = ng.load_netlist(artifact.text)
    assert {q.df for q in netlist.queues.values()} == {"Bfp8_b"}
    (op,) = netlist.all_ops()
    assert set(op.in_df) == {op.out_df} == {"Bfp8_b"} and op.intermed_df == "Float16_b"
    rng = np.random.default_rng(k)
    a, b = rng.standard_normal((k, 128)), rng.standard_normal((k, 256))
    got = run_netlist(artifact, {"a": a, "b": b})["output"]
    m_k, u_kt = int(op.attributes["m_k"]), int(op.attributes["u_kt"])
    assert np.array_equal(got, expected(a, b, m_k, u_kt))
    # against plain numpy, a tolerance the Float16_b netlist meets on the same inputs fails
    exact = a.T @ b
    tolerance = dict(rtol=0.0, atol=2.0**-7 * float(np.abs(exact).max()))
    bf16 = ng.emit_artifact(program(k), backend="buda", arch=arch)
    np.testing.assert_allclose(run_netlist(bf16, {"a": a, "b": b})["output"], exact, **tolerance)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(got, exact, **tolerance)


def test_bfp8_b_drops_small_values_next_to_large_ones() -> None:
    """What a shared exponent does: a column 2**-8 smaller than its block's largest vanishes."""
    artifact = ng.emit_artifact(program(128), backend="buda", df="Bfp8_b")
    rng = np.random.default_rng(1)
    a = np.abs(rng.standard_normal((128, 128))) + 0.5
    b = np.abs(rng.standard_normal((128, 256))) + 0.5
    b[:, 1::16] *= 2.0**-8  # one column of each 16-column block of b's queue
    got = run_netlist(artifact, {"a": a, "b": b})["output"]
    assert (a.T @ b)[:, 1::16].min() > 0
    assert np.all(got[:, 1::16] == 0)
    assert np.array_equal(got, expected(a, b, 1, 4))


def test_bfp8_b_with_a_fused_activation() -> None:
    artifact = ng.emit_artifact(program(512, matmul_relu), backend="buda", df="Bfp8_b")
    assert ng.check_netlist(artifact.text, strict=True) == []
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((512, 128)), rng.standard_normal((512, 256))
    got = run_netlist(artifact, {"a": a, "b": b})["output"]
    assert np.array_equal(got, quantize(got, "Bfp8_b"))
    exact = np.maximum(a.T @ b, 0.0)
    np.testing.assert_allclose(got, exact, atol=2.0**-5 * float(np.abs(exact).max()))


def test_bfp8_b_halves_the_dram_traffic_in_the_model() -> None:
    bf16 = TenstorrentCostModel().price(program(1024))
    bfp8 = TenstorrentCostModel(df="Bfp8_b").price(program(1024))
    assert bfp8.dram_bytes < 0.6 * bf16.dram_bytes


@pytest.mark.parametrize(
    ("arch", "df", "message"),
    [
        ("wormhole_b0", "Bfp9", "df must be one of Float32, Float16_b, Float16, Bfp8_b"),
        ("grayskull", "Float32", "grayskull has no Float32 data path"),
    ],
)
def test_unknown_or_impossible_formats_are_refused(arch: str, df: str, message: str) -> None:
    with pytest.raises(BudaEmitError, match=message):
        ng.emit_artifact(program(128), backend="buda", arch=arch, df=df)


def test_cli_emit_df(tmp_path: Path, capsys) -> None:
    source, netlist = tmp_path / "p.nkg", tmp_path / "net.yaml"
    ng.write_program(program(128), source)
    assert main(["emit", str(source), "--backend", "buda", "--df", "Bfp8_b", "-o", str(netlist)]) == 0
    assert "df: Bfp8_b" in netlist.read_text()
    assert main(["check-netlist", str(netlist), "--strict"]) == 0
    assert main(["emit", str(source), "--backend", "buda", "--df", "Bfp9"]) == 2
    assert "df must be one of" in capsys.readouterr().err


def reciprocal_of_row_sums(x):
    return ng.tensor_scalar(x, ng.activation(ng.tensor_reduce(x, op="sum"), op="reciprocal"), op="multiply")


@pytest.mark.parametrize(
    ("function", "shape", "numpy_function"),
    [
        (lambda x: ng.activation(x, op="reciprocal"), (64, 20), lambda x: 1 / x),
        (lambda x: ng.activation(x, op="rsqrt"), (40, 72), lambda x: x**-0.5),
        (reciprocal_of_row_sums, (64, 64), lambda x: x / x.sum(axis=1, keepdims=True)),
    ],
)
def test_bfp8_b_tensors_whose_rows_end_inside_a_tile_are_stored_as_float16_b(
    function, shape: tuple[int, int], numpy_function
) -> None:
    """An op can fill a tile's padding with huge values (the reciprocal or rsqrt of its
    zeros); in a block format they would share an exponent with the real values of the
    block and round them to zero. Such tensors (a row statistic, rows of 20 or 72
    columns) are stored in Float16_b; input queues (zero padding) stay Bfp8_b."""
    artifact = ng.emit_artifact(
        ng.tile(function, {"x": shape}, target=ng.WORMHOLE_B0), backend="buda", df="Bfp8_b"
    )
    assert ng.check_netlist(artifact.text, strict=True) == []
    netlist = ng.load_netlist(artifact.text)
    assert netlist.queues["x"].df == "Bfp8_b"
    assert any(op.out_df == "Float16_b" for op in netlist.all_ops())
    x = np.random.default_rng(5).uniform(1.0, 2.0, shape)
    (out,) = run_netlist(artifact, {"x": x.astype(np.float32)}).values()
    expected = numpy_function(x)
    assert float(np.abs(out - expected).max() / np.abs(expected).max()) < 0.02
