"""The NKI confirmation compares a kernel's outputs with the program's element by element
(``confirm_with_profile``, and ``simulate --program`` alike): each element may differ from
the exact (float64) result by what rounding allows at that element.

One tolerance for a whole output, a share of its largest magnitude but at least of 1,
accepted wrong kernels (fp8 outputs of magnitude 0.09 zeroed or negated; the small rows
of a float32 ``exp`` whose largest output is 7e20 swapped or zeroed) and refused correct
ones that overflow at the dtype's largest value where the exact result is just below it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nkigym_graph as ng
import nkigym_graph.nki_sim as nki_sim
from nkigym_graph.cli import main
from nkigym_graph.search.confirm import _inputs, confirm_with_profile, kernel_agreement, kernel_tolerance

SHAPES = {"a": (128, 128), "b": (128, 256)}
SMALL = 0.002
"""Scales a 128-long dot product of standard normals to outputs below 0.1."""


def small_matmul(a, b):  # type: ignore[no-untyped-def]
    return ng.tensor_scalar(ng.nc_matmul(a, b), SMALL, op="multiply")


def exp_of_matmul(a, b):  # type: ignore[no-untyped-def]
    return ng.activation(ng.nc_matmul(a, b), op="exp")


def exp_of_relu(a, b):  # type: ignore[no-untyped-def]
    return ng.activation(ng.activation(ng.nc_matmul(a, b), op="relu"), op="exp")


def exp_of_exp(scale: float) -> Callable[..., Any]:
    def exp_of_exp(a, b):  # type: ignore[no-untyped-def]
        return ng.activation(ng.activation(ng.nc_matmul(a, b), op="exp", scale=scale), op="exp")

    return exp_of_exp


def exp_of_scaled(scale: float) -> Callable[..., Any]:
    def exp_of_scaled(a, b):  # type: ignore[no-untyped-def]
        return ng.activation(ng.tensor_scalar(ng.nc_matmul(a, b), scale, op="multiply"), op="exp")

    return exp_of_scaled


def largest_dot(dtype: str, inputs: dict[str, np.ndarray] | None = None) -> float:
    """The largest element of ``a.T @ b`` on the inputs the confirmation draws for ``dtype``
    (or on ``inputs``), exactly."""
    given = inputs or _inputs(ng.tile(exp_of_matmul, SHAPES, dtype=dtype), 0)
    return float((given["a"].astype(np.float64).T @ given["b"].astype(np.float64)).max())


def changing_outputs(monkeypatch: pytest.MonkeyPatch, change: Callable[[np.ndarray], np.ndarray]) -> None:
    """Make ``nki_sim.profile`` report ``change`` of the kernel's output."""
    real = nki_sim.profile

    def changed(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = real(*args, **kwargs)
        return dataclasses.replace(found, outputs=change(np.asarray(found.outputs)))

    monkeypatch.setattr(nki_sim, "profile", changed)


def refused(program: ng.Program) -> bool:
    try:
        confirm_with_profile(program)
    except ng.SearchError as err:
        assert "computes something else than the program" in str(err)
        return True
    return False


@pytest.mark.parametrize("dtype", ["float8_e4m3", "float8_e5m2"])
@pytest.mark.parametrize("change", [np.zeros_like, np.negative])
def test_a_wrong_fp8_kernel_of_small_outputs_is_refused(
    monkeypatch: pytest.MonkeyPatch, dtype: str, change: Callable[[np.ndarray], np.ndarray]
) -> None:
    """The outputs are below 0.1: a quarter of at least 1 let any of them be 0 or negated."""
    program = ng.tile(small_matmul, SHAPES, dtype=dtype)
    assert SMALL * largest_dot(dtype) < 0.1
    assert not refused(program)  # the real kernel
    changing_outputs(monkeypatch, change)
    assert refused(program)


def swap_small_rows(found: np.ndarray) -> np.ndarray:
    """``found`` with its two first rows whose elements are all below 1e-6 of its largest swapped."""
    rows = np.flatnonzero(np.abs(found).max(axis=1) < 1e-6 * np.abs(found).max())[:2]
    assert len(rows) == 2
    swapped = found.copy()
    swapped[rows] = found[rows[::-1]]
    return swapped


def zero_small_rows(found: np.ndarray) -> np.ndarray:
    """``found`` with every row whose elements are all below 1e-6 of its largest zeroed."""
    small = np.abs(found).max(axis=1) < 1e-6 * np.abs(found).max()
    assert small.any()
    return np.where(small[:, None], 0.0, found).astype(found.dtype)


@pytest.mark.parametrize("change", [swap_small_rows, zero_small_rows])
def test_a_float32_exp_with_wrong_small_rows_is_refused(
    monkeypatch: pytest.MonkeyPatch, change: Callable[[np.ndarray], np.ndarray]
) -> None:
    """The largest output is about 7e20: 1e-4 of it let every row below 7e16 be anything."""
    program = ng.tile(exp_of_matmul, SHAPES, dtype="float32")
    assert np.exp(largest_dot("float32")) > 1e20
    assert not refused(program)
    changing_outputs(monkeypatch, change)
    assert refused(program)


def overflowing_exp_of_exp() -> tuple[float, np.ndarray]:
    """A scale ``s`` at which ``exp(exp(s * a.T @ b))`` computed by numpy in float32 on the
    confirmation's inputs overflows where the exact result is finite and below float32's
    largest value, and that float32 result."""
    inputs = _inputs(ng.tile(exp_of_matmul, SHAPES), 0)
    a, b = (inputs[name].astype(np.float32) for name in ("a", "b"))
    largest = float(np.finfo(np.float32).max)
    for step in range(-50, 50):
        scale = float(np.log(np.log(largest))) / largest_dot("float32") * (1 + step * 2e-8)
        in_float32 = np.exp(np.exp(np.float32(scale) * (a.T @ b)))
        exact = np.exp(np.exp(scale * (a.astype(np.float64).T @ b.astype(np.float64))))
        if (np.isinf(in_float32) & (exact < largest)).any():
            return scale, in_float32
    raise AssertionError("no scale overflows float32 where the exact result does not")


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_a_float32_exp_of_exp_as_exact_as_numpy_is_accepted_where_it_overflows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``exp(exp(s * a.T @ b))`` with its largest element at float32's largest value: a
    kernel that computes as numpy does in float32, and overflows there where the exact
    result is just below that value, was refused (an infinite difference)."""
    scale, in_float32 = overflowing_exp_of_exp()
    changing_outputs(monkeypatch, lambda found: in_float32)
    assert not refused(ng.tile(exp_of_exp(scale), SHAPES, dtype="float32"))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize(("dtype", "largest"), [("float16", 11.0899), ("float8_e5m2", 11.02)])
def test_a_kernel_overflowing_at_its_dtypes_largest_value_is_accepted(dtype: str, largest: float) -> None:
    """``exp(s * a.T @ b)`` whose largest exact element is just below the value that rounds
    to infinity in ``dtype`` (exp(11.09) in fp16, exp(11.03) in e5m2): the kernel rounds
    ``s * a.T @ b`` up to the next ``dtype`` value before ``exp``, and overflows there."""
    program = ng.tile(exp_of_scaled(largest / largest_dot(dtype)), SHAPES, dtype=dtype)
    found = np.asarray(confirm_with_profile(program).outputs, dtype=np.float64)
    exact = np.asarray(ng.interpret(program, np.float64, **_inputs(program, 0)))
    assert (np.isinf(found) & np.isfinite(exact)).any()


# -- simulate --program: the same comparison ----------------------------------------------


def simulate(tmp_path: Path, kernel_of: ng.Program, program: ng.Program) -> int:
    """``simulate --program`` of ``kernel_of``'s NKI kernel against ``program``."""
    kernel, text = tmp_path / "kernel.py", tmp_path / "p.nkg"
    ng.write_program(program, text)
    kernel.write_text(ng.emit(kernel_of, backend="nki"))
    return main(["simulate", str(kernel), "--program", str(text)])


def negated_small_matmul(a, b):  # type: ignore[no-untyped-def]
    return ng.tensor_scalar(ng.nc_matmul(a, b), -SMALL, op="multiply")


def test_simulate_reports_an_fp8_kernel_of_negated_small_outputs(tmp_path: Path, capsys) -> None:
    kernel_of = ng.tile(small_matmul, SHAPES, dtype="float8_e4m3")
    assert simulate(tmp_path, kernel_of, kernel_of) == 0
    assert simulate(tmp_path, kernel_of, ng.tile(negated_small_matmul, SHAPES, dtype="float8_e4m3")) == 1
    assert "MISMATCH" in capsys.readouterr().out


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_simulate_reports_a_float32_exp_kernel_with_wrong_small_elements(tmp_path: Path, capsys) -> None:
    """The kernel of ``exp(t)`` against the program ``exp(relu(t))``: they differ (by less
    than 1) where ``t`` is negative."""
    kernel_of = ng.tile(exp_of_matmul, SHAPES)
    assert simulate(tmp_path, kernel_of, ng.tile(exp_of_relu, SHAPES)) == 1
    assert "MISMATCH" in capsys.readouterr().out


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_simulate_accepts_a_kernel_overflowing_at_fp16s_largest_value(tmp_path: Path, capsys) -> None:
    rng = np.random.default_rng(0)  # the inputs simulate draws (--seed 0), in fp16
    inputs = {name: rng.standard_normal(shape).astype(np.float16) for name, shape in SHAPES.items()}
    program = ng.tile(exp_of_scaled(11.0899 / largest_dot("float16", inputs)), SHAPES, dtype="float16")
    found = np.asarray(nki_sim.simulate(ng.emit(program, backend="nki"), *inputs.values()), dtype=np.float64)
    exact = np.asarray(ng.interpret(program, np.float64, **inputs))
    assert (np.isinf(found) & np.isfinite(exact)).any()
    assert simulate(tmp_path, program, program) == 0
    assert "(ok)" in capsys.readouterr().out


# -- the rules, element by element ----------------------------------------------------------


def test_non_finite_elements_agree_only_with_the_same_non_finite_reference() -> None:
    """A nan agrees only with a nan of the exact or the rounded result; an infinity with the
    same infinity of either, or where the exact result is within its tolerance of the
    dtype's largest value (65504 in fp16) on that side."""
    exact = np.array([1.0, np.nan, 1.0, 1.0, 65000.0, 65000.0, 100.0, np.inf, 2.0])
    rounded = np.array([1.0, np.nan, np.nan, np.inf, 65024.0, 65024.0, np.inf, np.inf, 2.0])
    got = np.array([np.nan, np.nan, np.nan, np.inf, np.inf, -np.inf, -np.inf, 65504.0, 2.0])
    tolerance = kernel_tolerance("float16", exact, np.zeros_like(exact), rounded)
    agree = kernel_agreement(got, exact, rounded, tolerance, "float16")
    assert agree.tolist() == [False, True, True, True, True, False, False, False, True]


def test_the_tolerance_is_the_elements_own() -> None:
    """``KERNEL_RTOL`` of each element (of the smallest normal number below it), the
    rounding bound there and the rounded run's error there."""
    exact = np.array([1000.0, 0.01, 0.0, 1.0])
    bound = np.array([0.0, 0.0, 0.0, 0.5])
    rounded = np.array([1000.0, 0.01, 0.0, 1.25])
    tolerance = kernel_tolerance("float8_e4m3", exact, bound, rounded)
    assert tolerance.tolist() == [250.0, 0.25 * 2.0**-6, 0.25 * 2.0**-6, 0.25 + 0.5 + 0.25]
    assert kernel_tolerance("float32", exact, bound, rounded)[1] == pytest.approx(1e-6)
