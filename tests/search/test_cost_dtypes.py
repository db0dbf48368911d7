"""The trn2 cost model prices every on-chip tile in the dtype the kernel holds it in:
its ``kernel_dtype`` (one variable at a time, on the model's hot path) agrees with the
scheduler's ``tile_dtypes`` (the kernel plan's streams), for every workload in every
dtype, float64 included (the hardware has no float64: computed tiles are fp32)."""

from __future__ import annotations

import pytest
from support import example_workloads

import nkigym_graph as ng
from nkigym_graph.scheduling.allocate import tile_dtypes
from nkigym_graph_plugins.trn2_cost.pricing import kernel_dtype

WORKLOADS = example_workloads().WORKLOADS

NAMES = sorted(WORKLOADS)


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("saturated", [False, True])
def test_the_model_prices_tiles_in_the_kernels_dtypes(name: str, dtype: str, saturated: bool) -> None:
    workload = WORKLOADS[name]
    program = ng.tile(workload.func, workload.small, dtype=dtype)
    if saturated:
        program = ng.saturate(program)
    scheduler = tile_dtypes(program)
    known: dict[str, str] = {}
    on_chip = [var for var, info in program.variables.items() if not info.external]
    assert on_chip
    disagree = {
        var: (kernel_dtype(program, var, known), scheduler(var))
        for var in on_chip
        if kernel_dtype(program, var, known) != scheduler(var)
    }
    assert disagree == {}
    if dtype == "float64":  # only tiles that keep a loaded tile's dtype are float64 (loads, transposes)
        computed = [
            v
            for v in on_chip
            if not any(program[n].op.result_keeps_input_dtype for n in program.writers_of(v))
        ]
        assert computed and {kernel_dtype(program, var, known) for var in computed} == {"float32"}
