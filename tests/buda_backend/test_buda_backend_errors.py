"""What the backend refuses, and how it says so."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from buda_backend.programs import CASES, MORE_CASES, assert_matches_program

import nkigym_graph as ng
from nkigym_graph.buda import Violation
from nkigym_graph.ir.targets import WORMHOLE_B0
from nkigym_graph_plugins.buda_backend import BudaEmitError, emit, run_netlist
from nkigym_graph_plugins.buda_backend.placement import place, shrink


def test_unknown_options_and_architectures_are_named() -> None:
    program = CASES["matmul"].program(WORMHOLE_B0)
    with pytest.raises(BudaEmitError, match=r"unknown option\(s\) \['fidelity'\].*arch="):
        ng.emit_artifact(program, backend="buda", fidelity="HiFi2")
    with pytest.raises(BudaEmitError, match="no Buda architecture for 'trn2'"):
        ng.emit_artifact(program, backend="buda", arch="trn2")
    assert issubclass(BudaEmitError, ng.NkigymError)


@pytest.mark.parametrize("value", ["no", 0, None])
def test_allow_over_limit_takes_a_bool(value: object) -> None:
    """``allow_over_limit="no"`` would be truthy: it is refused, not read as True."""
    program = CASES["matmul"].program(WORMHOLE_B0)
    with pytest.raises(BudaEmitError, match="allow_over_limit must be True or False"):
        ng.emit_artifact(program, backend="buda", allow_over_limit=value)


def test_an_op_without_a_buda_form_names_the_op_and_the_reason() -> None:
    def masked_scores(a: Any, b: Any) -> Any:
        return ng.affine_select(ng.nc_matmul(a, b))

    program = ng.tile(masked_scores, {"a": (32, 64), "b": (32, 64)}, target=WORMHOLE_B0)
    with pytest.raises(BudaEmitError, match=r"affine_select.*no Buda op computes a value from an element"):
        ng.emit_artifact(program, backend="buda")


def test_a_netlist_that_breaks_a_rule_is_never_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    def always_forked(netlist: Any, arch: Any = None, **options: Any) -> list[Violation]:
        return [Violation("general.2", "fused op 0: dest is forked")]

    monkeypatch.setattr(emit, "check_netlist", always_forked)
    program = CASES["matmul_bias_relu"].program(WORMHOLE_B0)
    with pytest.raises(
        BudaEmitError, match=r"breaks 1 rule\(s\)\n  \[general.2\] fused op 0: dest is forked"
    ) as info:
        ng.emit_artifact(program, backend="buda")
    assert info.value.violations == ("[general.2] fused op 0: dest is forked",)


def test_placement_lays_ops_side_by_side_and_reports_when_they_do_not_fit() -> None:
    assert place([("a", (2, 3)), ("b", (4, 1)), ("c", (1, 8))], (10, 8)) == {
        "b": (0, 0),
        "a": (0, 1),
        "c": (4, 0),
    }
    assert place([("a", (10, 8)), ("b", (1, 1))], (10, 8)) is None
    assert shrink((4, 2)) == (2, 2) and shrink((1, 6)) == (1, 3) and shrink((1, 1)) == (1, 1)


def test_ops_shrink_until_they_fit_the_worker_grid(rng: np.random.Generator) -> None:
    # Two plain 256x256 matmuls tiled 32x32 want 8x8 cores each: 128 > 80 on Wormhole B0.
    case = MORE_CASES["double_matmul_stationary"]
    shapes = {"a": (64, 256), "b": (64, 256), "c": (256, 256)}
    program = ng.tile(case.function, shapes, target=WORMHOLE_B0)
    artifact = ng.emit_artifact(program, backend="buda", arch="wormhole_b0")
    grids = [op["grid_size"] for op in artifact.parsed["graphs"]["double_matmul_stationary"].values()]
    # 64 + 64 cores do not fit in 80: the op with the most slack (the first matmul, K = 64:
    # a quarter of the second's work) is halved, twice; the second keeps its 64 cores
    assert grids == [[2, 4], [8, 8]]
    assert ng.check_netlist(artifact.parsed, strict=True) == []
    inputs = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    got = run_netlist(artifact, inputs)["output"]
    assert_matches_program(got, ng.interpret(program, **inputs), artifact)
