"""A ``[P, 1]`` operand (``tensor_scalar``'s operand0, ``activation``'s bias) is a value
held per lane, not a second input stream: the timing model prices the instruction at the
one-input rate, like a number operand, and the cost model agrees."""

from __future__ import annotations

import numpy as np

import nkigym_graph as ng
from nkigym_graph.nki_sim import profile

HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"


def _kernel(operand: str) -> str:
    return (
        HEADER
        + f"""@nki.jit
def kernel(a, c):
    t = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.sbuf)
    col = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    u = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=col, src=c)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0={operand})  # SCALE
    out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=u)
    return out
"""
    )


def _scale_ns(operand: str) -> float:
    a = np.ones((128, 2048), dtype=np.float32)
    c = np.ones((128, 1), dtype=np.float32)
    prof = profile(_kernel(operand), a, c)
    (duration,) = [s.end - s.start for s in prof.slices if "SCALE" in prof._label(prof.events[s.event])]
    return duration


def test_column_operand_streams_like_a_number() -> None:
    assert _scale_ns("col") == _scale_ns("2.0")


def test_cost_model_prices_a_column_operand_like_a_number() -> None:
    def by_number(x):
        return ng.tensor_scalar(x, 2.0, op="multiply")

    def by_column(x, c):
        return ng.tensor_scalar(x, c, op="multiply")

    number = ng.estimate(ng.tile(by_number, {"x": (128, 2048)}))
    column = ng.estimate(ng.tile(by_column, {"x": (128, 2048), "c": (128, 1)}))
    assert column.engine_seconds["vector"] == number.engine_seconds["vector"]
