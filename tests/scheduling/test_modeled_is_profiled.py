"""A scheduled program's modeled time is the profile of the kernel the NKI backend emits
for it, engine choices included: the backend lowers a plan under engine policies too
(``nki_backend.engines``) and keeps the kernel its engine model ends first, and spreads
a ``[1, F]`` row over the partitions before an element-wise op reads it; the trn2 cost
model times that same kernel (``nki_backend.timing``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from support import example_workloads

import nkigym_graph as ng

WORKLOADS = example_workloads().WORKLOADS

CASES = [
    ("softmax", {"x": (200, 300)}, "order=P"),
    ("softmax", {"x": (256, 1024)}, "order=P buffers=load.x:3"),
    ("layernorm", {"x": (200, 300), "gamma": (1, 300), "beta": (1, 300)}, "order=P"),
    ("layernorm", {"x": (384, 512), "gamma": (1, 512), "beta": (1, 512)}, "order=P"),
    ("rmsnorm", {"x": (200, 300), "gamma": (1, 300)}, "order=P"),
    ("rmsnorm", {"x": (384, 1024), "gamma": (1, 1024)}, "order=P"),
    ("rmsnorm_matmul", {"x": (200, 300), "w": (300, 260)}, "order=M,K"),
    ("attention", {"q_t": (64, 200), "k_t": (64, 300), "v": (300, 64)}, "order=k_t.1,M"),
    ("causal_attention", {"q_t": (64, 300), "k_t": (64, 300), "v": (300, 64)}, "order=M,k_t.1"),
]


def _profiled_ns(program: ng.Program, name: str, shapes: dict[str, tuple[int, int]]) -> float:
    storage = np.float32 if WORKLOADS[name].dtype == "float32" else ml_dtypes.bfloat16
    arrays = [a.astype(storage) for a in WORKLOADS[name].inputs(shapes, seed=1).values()]
    return float(ng.nki_sim.profile(ng.emit(program, backend="nki"), *arrays).total_ns)


@pytest.mark.parametrize("name,shapes,schedule", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_modeled_time_is_the_emitted_kernels_profile(
    name: str, shapes: dict[str, tuple[int, int]], schedule: str
) -> None:
    workload = WORKLOADS[name]
    program = ng.saturate(ng.tile(workload.func, shapes, dtype=workload.dtype)).with_schedule(schedule)
    model = ng.estimate(program)
    assert model.feasible
    assert model.seconds == pytest.approx(_profiled_ns(program, name, shapes) * 1e-9, rel=1e-6)


def test_schedule_search_ranks_by_the_emitted_kernel() -> None:
    """The schedule search's best softmax kernel, as modeled, is its kernel's profile."""
    name = "softmax"
    workload = WORKLOADS[name]
    program = ng.tile(workload.func, workload.small, dtype=workload.dtype)
    best = ng.search(program, strategy="schedule", budget=20, seed=0, confirm=False, progress=False).best
    assert best.schedule is not None
    modeled = ng.estimate(best).seconds
    assert modeled == pytest.approx(_profiled_ns(best, name, workload.small) * 1e-9, rel=1e-6)
