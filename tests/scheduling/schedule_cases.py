"""Programs the schedule tests run (tiled and saturated, fp32, small), random valid
schedules for them, and numpy references computed in float64."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

import nkigym_graph as ng
from nkigym_graph.ir.axes import program_axes
from nkigym_graph.ir.schedule import Schedule, ScheduleError
from nkigym_graph.scheduling.loops import loop_axes
from nkigym_graph.scheduling.plan import stream_usage


def matmul(a: Any, b: Any) -> Any:
    return ng.nc_matmul(a, b)


def matmul_bias_relu(a: Any, b: Any, bias: Any) -> Any:
    return ng.activation(ng.tensor_tensor(ng.nc_matmul(a, b), bias, op="add"), op="relu")


def two_matmuls(a: Any, b: Any, c: Any) -> Any:
    return ng.nc_matmul(ng.nc_matmul(a, b), c)


def reference(kind: str, arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    """The program's value computed by numpy in float64 (``nc_matmul(x, y)`` is ``x.T @ y``)."""
    f = {name: np.asarray(value, dtype=np.float64) for name, value in arrays.items()}
    if kind == "matmul":
        return f["a"].T @ f["b"]
    if kind == "bias_relu":
        return np.maximum(f["a"].T @ f["b"] + f["bias"], 0.0)
    if kind == "chain":
        return (f["a"].T @ f["b"]).T @ f["c"]
    raise ValueError(kind)


class Case(NamedTuple):
    kind: str
    func: Callable[..., Any]
    shapes: Mapping[str, tuple[int, int]]


def case(kind: str, m: int, k: int, n: int) -> Case:
    """``kind`` at ``a[k, m]``, ``b[k, n]`` (the chain's second matmul takes ``c[m, n]``)."""
    if kind == "matmul":
        return Case(kind, matmul, {"a": (k, m), "b": (k, n)})
    if kind == "bias_relu":
        return Case(kind, matmul_bias_relu, {"a": (k, m), "b": (k, n), "bias": (m, n)})
    if kind == "chain":
        return Case(kind, two_matmuls, {"a": (k, m), "b": (k, n), "c": (m, n)})
    raise ValueError(kind)


@functools.cache
def tiled(kind: str, m: int, k: int, n: int) -> ng.Program:
    c = case(kind, m, k, n)
    return ng.tile(c.func, dict(c.shapes), dtype=np.float32)


@functools.cache
def saturated(kind: str, m: int, k: int, n: int) -> ng.Program:
    return ng.saturate(tiled(kind, m, k, n))


def inputs(kind: str, m: int, k: int, n: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = case(kind, m, k, n).shapes
    return {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}


PLAN_CASES = [
    ("matmul", 256, 256, 512),
    ("matmul", 384, 512, 256),
    ("matmul", 512, 384, 384),
    ("bias_relu", 256, 384, 512),
    ("bias_relu", 384, 256, 256),
    ("chain", 256, 256, 384),
    ("chain", 256, 384, 256),
]
"""(kind, M, K, N): small fp32 programs, saturated before scheduling."""


def random_loop_schedule(program: ng.Program, rnd: random.Random) -> Schedule:
    """A random loop order, block sizes (tile * 2^i up to the axis, for a random subset of
    the loop axes) and inner order over ``program``'s loop axes."""
    tiles = loop_axes(program)
    extent = program_axes(program).sizes
    axes = list(tiles)
    order = axes[:]
    rnd.shuffle(order)
    blocks = {}
    for axis in axes:
        if rnd.random() < 0.5:
            choices = []
            size = tiles[axis]
            while size <= extent[axis]:
                choices.append(size)
                size *= 2
            blocks[axis] = rnd.choice(choices)
    inner: list[str] = []
    if rnd.random() < 0.5:
        inner = axes[:]
        rnd.shuffle(inner)
    return Schedule(order=order, blocks=blocks, inner=inner)


def random_schedule(program: ng.Program, rnd: random.Random) -> Schedule:
    """``random_loop_schedule`` plus random buffer counts (1 .. twice what the stream
    keeps, or its tiles per block) for a random subset of the streams its kernel has."""
    schedule = random_loop_schedule(program, rnd)
    usage = stream_usage(program.with_schedule(schedule))
    buffers = {}
    for name in sorted(usage):
        if rnd.random() < 0.5:
            use = usage[name]
            buffers[name] = rnd.randint(1, max(2 * use.peak, use.per_block, 2))
    return schedule.replace(buffers=buffers)


def try_schedule(program: ng.Program, schedule: Schedule) -> ng.Program | None:
    """``program`` with ``schedule``, or None when the schedule is refused (ScheduleError)."""
    try:
        return program.with_schedule(schedule)
    except ScheduleError:
        return None
