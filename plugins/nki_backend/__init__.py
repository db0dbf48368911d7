"""The ``nki`` backend: emit a program as an AWS NKI kernel (NKI 0.6 / 0.7 dialect).

>>> import nkigym_graph
>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> source = nkigym_graph.emit(tiled_matmul(256, 256, 256), backend="nki")  # doctest: +SKIP
>>> out = nkigym_graph.nki_sim.simulate(source, a, b)                       # doctest: +SKIP

The kernel takes the program's parameters (HBM inputs), allocates its outputs with
``nl.ndarray(..., buffer=nl.shared_hbm)`` and returns them. Each program statement
becomes a commented group of ``nisa`` instructions (:mod:`.lowering`); matmuls
accumulate over K in one fp32 PSUM tile that is evicted with ``nisa.tensor_copy``
before DMA or Tensor Engine use; merged statements stay merged (one N=512 matmul, one
wide DMA). Regular repetition is rolled into loops (:mod:`.rolling`); wide loads are
split when SBUF would overflow (:mod:`.split`). Options: :mod:`.emitter`.
"""

from __future__ import annotations

from typing import Any

from nkigym_graph import hookimpl
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.targets import Target
from nkigym_graph.plugin.protocols import Artifact, Backend

from .emitter import EmitOptions, emit_kernel
from .errors import NkiEmitError
from .lowering import LOWERINGS


class NkiBackend(Backend):
    """Emit NKI kernel source (``Artifact.text``, suffix ``.py``)."""

    name = "nki"

    def emit(self, program: Program, target: Target, **options: Any) -> Artifact:
        return emit_kernel(program, target, LOWERINGS, **options)


@hookimpl
def nkigym_graph_register_backends() -> list[type[Backend]]:
    return [NkiBackend]


__all__ = ["LOWERINGS", "EmitOptions", "NkiBackend", "NkiEmitError", "emit_kernel"]
