"""A numpy simulator of the NKI kernel language (NKI 0.6 / 0.7 dialect).

Run a kernel -- NKI source text or a Python function -- on numpy arrays::

    from nkigym_graph.nki_sim import simulate
    out = simulate(kernel_source, lhsT, rhs)
    out, report = simulate(kernel_source, lhsT, rhs, report=True)
    report.peak_sbuf_bytes, report.peak_psum_bytes

time it on a model of the engines and DMA queues (a profile, not a measurement)::

    prof = profile(kernel_source, lhsT, rhs)
    print(prof); prof.write_trace("kernel.json")

or keep a :class:`Simulator` to run it several times (``Simulator(src).run(a, b)``,
then ``.report``, ``.peak_sbuf_bytes``, ``.peak_psum_bytes``).

The ``nki``, ``nki.language`` and ``nki.isa`` modules the kernel imports are numpy-backed
mocks that exist only inside the simulation. They enforce NKI's rules (partition dim,
matmul M/K/N, buffer kinds, PSUM accumulation, dtypes, SBUF/PSUM capacity, unknown
keywords); a broken rule raises :class:`NKISimulationError` naming the instruction, the
kernel line and the rule id (all ids: :data:`RULES`, documented in
:mod:`nkigym_graph.nki_sim.rules`). Fresh allocations read as NaN, so reading memory the
kernel never wrote shows up as NaN in the result.
"""

from nkigym_graph.nki_sim.errors import NKISimulationError
from nkigym_graph.nki_sim.report import SimulationReport
from nkigym_graph.nki_sim.rules import RULES
from nkigym_graph.nki_sim.simulator import Simulator, simulate
from nkigym_graph.nki_sim.timing import Profile, profile

__all__ = ["RULES", "NKISimulationError", "Profile", "SimulationReport", "Simulator", "profile", "simulate"]
