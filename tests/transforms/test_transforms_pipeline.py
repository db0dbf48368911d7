"""Saturation end to end, batching, dead code, immutability of inputs."""

from __future__ import annotations

import numpy as np
import pytest

import nkigym_graph as ng
from nkigym_graph.ir.synthetic import tiled_matmul


def _matmul(a, b):
    return ng.nc_matmul(a, b)


def test_two_by_two_tile_matmul_pipeline() -> None:
    tiled = ng.tile(_matmul, {"a": (128, 256), "b": (128, 256)}, dtype=np.float64)
    reused = ng.saturate(tiled, ["data_reuse"])
    assert len(reused.statements_of("load")) == 4  # 2 tiles of a, 2 of b
    merged = ng.saturate(reused, ["operand_merge"])
    loads = [merged[n] for n in merged.statements_of("load")]
    assert {ld.operands[0].slices for ld in loads} == {((0, 128), (0, 256))}  # one wide load each
    matmuls = [merged[n] for n in merged.statements_of("nc_matmul")]
    sizes = [s.op.axis_sizes(s) for s in matmuls]
    assert [s["N"] for s in sizes] == [256, 256]
    assert all(s["M"] <= 128 for s in sizes)  # M never merges beyond its limit
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((128, 256)), rng.standard_normal((128, 256))
    np.testing.assert_allclose(ng.interpret(merged, a=a, b=b), a.T @ b, rtol=1e-12)


def test_saturation_reaches_n_512_and_never_exceeds_limits() -> None:
    program = ng.saturate(tiled_matmul(256, 256, 1024))
    for node in program.statements_of("nc_matmul"):
        sizes = program[node].op.axis_sizes(program[node])
        assert sizes["N"] == 512 and sizes["M"] == 128 and sizes["K"] == 128


def _one_at_a_time(program: ng.Program, names: list[str]) -> ng.Program:
    progress = True
    while progress:
        progress = False
        for name in names:
            while matches := ng.analyze(program, name):
                program = ng.apply(program, name, matches[0])
                progress = True
    return program


@pytest.mark.parametrize("shape", [(256, 256, 512), (384, 256, 640)])
def test_batched_saturation_equals_one_match_at_a_time(shape) -> None:
    program = tiled_matmul(*shape)
    names = ["data_reuse", "operand_merge", "dead_code"]
    assert ng.saturate(program, names) == _one_at_a_time(program, names)


def test_saturate_returns_the_same_object_when_nothing_applies() -> None:
    program = ng.saturate(tiled_matmul(128, 128, 128))
    assert ng.saturate(program) is program


def test_dead_code_removes_unread_statements_only() -> None:
    text = """
    def f(a):
        output = nkigym.ndarray((128, 128), dtype=np.float64)
        tensor_0 = a[0:128, 0:128]
        tensor_1 = a[0:128, 128:256]
        tensor_2 = nkigym.activation(tensor_1, op="exp")
        tensor_3 = nkigym.activation(tensor_0, op="exp")
        output[0:128, 0:128] = tensor_3
        return output
    """
    program = ng.parse_program(text)
    (first,) = ng.analyze(program, "dead_code")
    assert first.nodes == (3,) and "tensor_2 is never read" in first.detail
    cleaned = ng.saturate(program, ["dead_code"])
    assert len(cleaned) == 4  # tensor_2, then tensor_1, removed; the store stays
    assert "tensor_1" not in cleaned.variables


def test_a_match_applies_only_to_its_program() -> None:
    program = tiled_matmul(256, 128, 256)
    (match, *_) = ng.analyze(program, "data_reuse")
    other = tiled_matmul(256, 256, 256)
    with pytest.raises(ng.TransformError, match="found in another program"):
        ng.apply(other, "data_reuse", match)


def test_unknown_transform_is_named() -> None:
    with pytest.raises(ng.PluginError, match=r"unknown transform .fuse_everything.*data_reuse"):
        ng.saturate(tiled_matmul(128, 128, 128), ["fuse_everything"])
