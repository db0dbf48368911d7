"""Which engine runs an instruction that NKI lets several engines run.

``nisa.tensor_scalar`` runs on the Vector, Scalar or GpSimd Engine and
``nisa.tensor_tensor`` on the Vector or GpSimd Engine. The engines run their
instructions in order, side by side, so a kernel that gives them all to the Vector
Engine waits on it while the others idle. The backend keeps the time it has given each
engine so far (every instruction it emits, at the per-instruction times of the
calibrated timing model, ``nkigym_graph.nki_sim.timing``) and gives each flexible
instruction to the engine that ends least loaded, the Vector Engine on a tie::

    nisa.tensor_reduce(dst=m, op=nl.maximum, data=x, ...)         # Vector only: 4.4 us
    nisa.activation(dst=e, op=nl.exp, data=x, bias=m, ...)        # Scalar only: 3.6 us
    nisa.tensor_scalar(dst=y, data=e, op0=nl.multiply, operand0=r,
                       engine=nisa.engine.gpsimd)                 # least loaded of the three

The GpSimd Engine cannot read or write PSUM, so an instruction touching PSUM is given
to it only when nothing else can run it.
"""

from __future__ import annotations

from collections.abc import Sequence

from nkigym_graph.nki_sim.timing.constants import TimingConstants

VECTOR, SCALAR, GPSIMD = "vector", "scalar", "gpsimd"
FIXED_ENGINE = {
    "nisa.tensor_reduce": VECTOR,
    "nisa.tensor_copy": VECTOR,
    "nisa.tensor_tensor": VECTOR,
    "nisa.tensor_scalar": VECTOR,
    "nisa.memset": VECTOR,
    "nisa.activation": SCALAR,
}
"""The engine an instruction runs on when the backend does not choose one."""
CHOICES = {
    "nisa.tensor_scalar": (VECTOR, SCALAR, GPSIMD),
    "nisa.tensor_tensor": (VECTOR, GPSIMD),
}
"""The engines NKI lets run each flexible instruction, the default first."""


class EngineLoads:
    """Time given to each compute engine so far in one kernel, in ns."""

    def __init__(self, constants: TimingConstants) -> None:
        self.constants = constants
        self.busy = {VECTOR: 0.0, SCALAR: 0.0, GPSIMD: 0.0}

    def time_ns(self, engine: str, elements: int, inputs: int) -> float:
        """One instruction of ``elements`` per partition over ``inputs`` streamed operands."""
        c = self.constants
        if engine == VECTOR:
            per = c.vector_cycles_per_element_two_inputs if inputs >= 2 else c.vector_cycles_per_element
            return (c.vector_fixed_cycles + elements * per) / c.vector_clock_ghz
        if engine == SCALAR:
            return (c.scalar_fixed_cycles + elements * c.scalar_cycles_per_element) / c.scalar_clock_ghz
        return (c.gpsimd_fixed_cycles + elements * c.gpsimd_cycles_per_element) / c.gpsimd_clock_ghz

    def record(self, engine: str, elements: int, inputs: int) -> None:
        """Count an instruction ``engine`` runs."""
        self.busy[engine] += self.time_ns(engine, elements, inputs)

    def choose(self, options: Sequence[str], elements: int, inputs: int) -> str:
        """The engine of ``options`` that ends least loaded after this instruction
        (the first on a tie), counted."""
        engine = min(
            options, key=lambda e: (self.busy[e] + self.time_ns(e, elements, inputs), options.index(e))
        )
        self.record(engine, elements, inputs)
        return engine
