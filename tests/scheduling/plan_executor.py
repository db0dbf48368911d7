"""An executor of kernel plans written for the tests, independent of the backends: it
runs ``plan.steps`` in order with one numpy array per buffer of every stream, each
on-chip variable read from and written to the slot its step names, and checks at every
read that the slot still holds that variable (no live tile was overwritten)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from nkigym_graph.scheduling.plan import KernelPlan


class PlanExecutionError(AssertionError):
    """The plan reads a tile its buffer no longer holds, or names a buffer it lacks."""


def execute_plan(plan: KernelPlan, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The HBM tensors (parameters and outputs) after running ``plan`` on ``inputs``, in float64."""
    program = plan.program
    variables = program.variables
    buffers: dict[tuple[str, int], np.ndarray] = {
        (stream.name, number): np.full(stream.shape, np.nan)
        for stream in plan.streams.values()
        for number in range(stream.buffers)
    }
    holder: dict[tuple[str, int], str] = {}
    hbm: dict[str, np.ndarray] = {
        p.name: np.asarray(inputs[p.name], dtype=np.float64) for p in program.params
    }
    for out in program.outputs:
        hbm[out.name] = np.zeros(out.shape)
    written: set[str] = set()
    for step in plan.steps:
        stmt = program[step.node]
        op = stmt.op
        bound = dict(step.slots)
        where = f"step {program.describe(step.node)!r}{' (reload)' if step.reload else ''}"

        def buffer_of(var: str, where: str = where, bound: Mapping[str, Any] = bound) -> tuple[str, int]:
            slot = bound.get(var)
            if slot is None:
                raise PlanExecutionError(f"{where}: no slot for on-chip tile {var}")
            key = (slot.stream, slot.number)
            if key not in buffers:
                raise PlanExecutionError(f"{where}: {var} in {key}, which no stream declares")
            shape, room = variables[var].shape, buffers[key].shape
            if len(shape) != len(room) or any(n > r for n, r in zip(shape, room, strict=True)):
                raise PlanExecutionError(f"{where}: {var} {shape} does not fit its buffer {room}")
            return key

        def read(var: str, slices: Any, where: str = where) -> np.ndarray:
            index = tuple(slice(lo, hi) for lo, hi in slices)
            if variables[var].external:
                return np.array(hbm[var][index])
            key = buffer_of(var)
            if holder.get(key) != var:
                raise PlanExecutionError(f"{where}: reads {var} from {key}, which holds {holder.get(key)}")
            return np.array(buffers[key][index])

        if op.name == "alloc":
            var = stmt.dst.var
            if variables[var].external:
                hbm.setdefault(var, np.zeros(variables[var].shape))
            else:
                key = buffer_of(var)
                holder[key] = var
                buffers[key][...] = 0.0
                written.add(var)
            continue
        inputs_ = [read(stmt.operands[p].var, stmt.operands[p].slices) for p in op.read_positions]
        result = op.compute(inputs_, stmt.attr_map)
        var, slices = stmt.dst
        index = tuple(slice(lo, hi) for lo, hi in slices)
        if variables[var].external:
            target = hbm.setdefault(var, np.zeros(variables[var].shape))
        else:
            key = buffer_of(var)
            defines = step.reload or (var not in written and not stmt.accumulate)
            if not defines and holder.get(key) != var:
                raise PlanExecutionError(f"{where}: writes {var} into {key}, which holds {holder.get(key)}")
            holder[key] = var
            written.add(var)
            target = buffers[key]
        if stmt.accumulate:
            target[index] += result
        else:
            target[index] = result
    return hbm
