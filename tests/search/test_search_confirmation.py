"""``search``'s confirmation of the best program with its backend's artifact: the NKI
kernel's outputs (from ``nki_sim.profile``) are compared with the program's
interpretation, and a kernel that computes something else is a ``SearchError``, never a
result; a Buda netlist that breaks a rule is one too, and its numeric agreement is
reported."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import nkigym_graph as ng
import nkigym_graph.nki_sim as nki_sim
import nkigym_graph.search.run as search_run
from nkigym_graph.search.confirm import NetlistConfirmation


def matmul(a, b):  # type: ignore[no-untyped-def]
    return ng.nc_matmul(a, b)


SHAPES = {"a": (128, 128), "b": (128, 256)}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_the_kernel_of_the_best_program_is_profiled_and_agrees(dtype: str) -> None:
    """A float64 program (NKI has no float64) is confirmed with its fp32 kernel."""
    result = ng.search(ng.tile(matmul, SHAPES, dtype=dtype), budget=6, progress=False)
    assert result.profile is not None and result.profile.total_us > 0


def test_a_kernel_that_computes_something_else_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = nki_sim.profile

    def off_by_a_little(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = real(*args, **kwargs)
        return dataclasses.replace(found, outputs=np.asarray(found.outputs) + 0.5)

    monkeypatch.setattr(nki_sim, "profile", off_by_a_little)
    with pytest.raises(ng.SearchError, match="NKI kernel computes something else than the program") as raised:
        ng.search(ng.tile(matmul, SHAPES), budget=4, progress=False)
    unconfirmed = ng.search(ng.tile(matmul, SHAPES), budget=4, progress=False, confirm=False)
    assert unconfirmed.profile is None
    assert raised.value.result.best == unconfirmed.best  # the search's work is kept with the error


def row_max_of_log(x):  # type: ignore[no-untyped-def]
    return ng.tensor_reduce(ng.activation(x, op="log"), op="max")


@pytest.mark.filterwarnings("ignore:invalid value encountered in log")  # random inputs below 0
def test_a_best_program_the_backend_cannot_emit_is_a_search_error_keeping_the_result() -> None:
    """A row max of a log over 150 columns has no Buda netlist (the log of the tile
    padding is -inf, and the netlist masks the padding by multiplying it by 0): the search
    ended with the backend's own error after all its work, which was lost."""
    program = ng.tile(row_max_of_log, {"x": (128, 150)}, target=ng.WORMHOLE_B0)
    with pytest.raises(
        ng.SearchError,
        match=r"cannot be confirmed as a Buda netlist for wormhole_b0: .*maximum of .* an op made -inf",
    ) as raised:
        ng.search(program, budget=4, progress=False)
    assert "confirm=False" in str(raised.value)
    assert isinstance(raised.value.__cause__, ng.NkigymError)
    unconfirmed = ng.search(program, budget=4, progress=False, confirm=False)
    assert raised.value.result.best == unconfirmed.best and raised.value.result.netlist is None


def test_a_netlist_that_breaks_a_rule_is_an_error_and_a_difference_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A netlist the checker refuses is the backend's bug; a numeric difference beyond the
    data format's tolerance is reported (``ok``), since that tolerance is a rough one."""
    real = search_run.confirm_with_netlist
    program = ng.tile(matmul, {"a": (64, 64), "b": (64, 64)}, target=ng.WORMHOLE_B0)

    def breaking(program, seed=0):  # type: ignore[no-untyped-def]
        return dataclasses.replace(real(program, seed), violations=("general.1: tile_broadcast on input 0",))

    monkeypatch.setattr(search_run, "confirm_with_netlist", breaking)
    with pytest.raises(ng.SearchError, match="breaks 1 rule"):
        ng.search(program, budget=4, progress=False)

    def differing(program, seed=0):  # type: ignore[no-untyped-def]
        found = real(program, seed)
        return dataclasses.replace(found, max_error=10 * found.tolerance)

    monkeypatch.setattr(search_run, "confirm_with_netlist", differing)
    confirmation = ng.search(program, budget=4, progress=False).netlist
    assert confirmation is not None and not confirmation.ok and "evaluates DIFFERENT" in str(confirmation)


def test_a_netlist_confirmation_that_agrees_is_returned() -> None:
    program = ng.tile(matmul, {"a": (64, 64), "b": (64, 64)}, target=ng.WORMHOLE_B0)
    confirmation = ng.search(program, budget=4, progress=False).netlist
    assert isinstance(confirmation, NetlistConfirmation) and confirmation.ok


FRAGMENT = """t = x[0:128, 0:128]
u = nkigym.activation(t, op="exp")
y[0:128, 0:128] = u
"""


@pytest.mark.parametrize("strategy", ["greedy", "schedule"])
def test_a_fragment_is_searched_without_schedules_or_a_kernel(strategy: str) -> None:
    """A fragment is no kernel: the schedule choices offered matches that apply refused
    (the schedule search stopped on them) and the confirmation tried to emit it."""
    fragment = ng.parse_fragment(FRAGMENT)
    assert all(ng.analyze(fragment, name) == [] for name in ("loop_order", "block_size", "buffer_count"))
    result = ng.search(fragment, strategy=strategy, budget=5, progress=False)
    assert result.profile is None and result.best == fragment


@pytest.mark.parametrize("dtype", ["float8_e4m3", "float8_e5m2"])
def test_an_fp8_netlist_agrees_with_the_program_within_fp8_rounding(dtype: str) -> None:
    """The Buda backend holds an fp8 program's values in Float32, the program's
    interpretation rounds them to fp8: the tolerance is fp8's (it was Float32's, and every
    fp8 search reported a netlist that "evaluates DIFFERENT")."""
    program = ng.tile(matmul, {"a": (256, 128), "b": (256, 256)}, dtype=dtype, target=ng.WORMHOLE_B0)
    confirmation = ng.search(program, budget=4, progress=False).netlist
    assert confirmation is not None and confirmation.ok, str(confirmation)
    assert confirmation.max_error > 0  # the program's own rounding, within the tolerance
    # fp8 inputs are held exactly, so a float32 result keeps Float32's tolerance
    text = str(ng.tile(matmul, {"a": (256, 128), "b": (256, 256)}, target=ng.WORMHOLE_B0))
    mixed = ng.parse_program(text, dtype={"a": dtype, "b": "float32"}, target=ng.WORMHOLE_B0)
    assert mixed.output_dtype == "float32"
    kept = ng.search(mixed, budget=4, progress=False).netlist
    assert kept is not None and kept.ok and kept.tolerance < 1e-3 * confirmation.tolerance


def exp_of_relu(a, b):  # type: ignore[no-untyped-def]
    return ng.activation(ng.activation(ng.nc_matmul(a, b), op="relu"), op="exp")


def test_a_bf16_kernel_whose_rounding_exp_magnifies_is_confirmed() -> None:
    """The kernel holds relu's tile in bf16 and exp magnifies that rounding beyond the bf16
    tolerance of the program's float64 interpretation (about 7% of the largest output):
    this was reported as a bug of the backend. It is as close to the exact result as the
    program with its results rounded to bf16."""
    program = ng.tile(exp_of_relu, {"a": (128, 128), "b": (128, 128)}, dtype="bfloat16")
    result = ng.search(program, budget=4, progress=False)
    assert result.profile is not None


def exp_of_matmul(a, b):  # type: ignore[no-untyped-def]
    return ng.activation(ng.nc_matmul(a, b), op="exp")


def tanh_of_matmul(a, b):  # type: ignore[no-untyped-def]
    return ng.activation(ng.nc_matmul(a, b), op="tanh")


@pytest.mark.parametrize(
    ("function", "shapes", "dtype"),
    [
        (exp_of_matmul, {"a": (128, 128), "b": (128, 256)}, "float16"),  # the rounded run overflows
        (tanh_of_matmul, {"a": (256, 200), "b": (256, 384)}, "float8_e4m3"),  # K split: t = ...; t += ...
    ],
)
def test_a_wrong_kernel_is_refused_where_rounding_gives_no_bound(
    monkeypatch: pytest.MonkeyPatch, function: Any, shapes: dict[str, tuple[int, int]], dtype: str
) -> None:
    """The allowance for rounding must not excuse a wrong kernel: where the program run with
    its results rounded overflowed, the allowance was infinite (zeros, negated outputs and
    nan were accepted), and rounding a K-split matmul's first partial sum made it wider than
    tanh's whole range."""
    real = nki_sim.profile

    def negated(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = real(*args, **kwargs)
        return dataclasses.replace(found, outputs=-np.nan_to_num(np.asarray(found.outputs, dtype=np.float32)))

    program = ng.tile(function, shapes, dtype=dtype)
    assert ng.search(program, budget=6, progress=False).profile is not None  # the real kernel passes
    monkeypatch.setattr(nki_sim, "profile", negated)
    with pytest.raises(ng.SearchError, match="computes something else than the program"):
        ng.search(program, budget=6, progress=False)
