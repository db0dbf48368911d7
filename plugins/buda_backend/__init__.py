"""The ``buda`` backend: programs to Tenstorrent Buda netlists with fused ops.

``nkigym_graph.emit_artifact(program, backend="buda", arch="wormhole_b0")`` returns an
``Artifact`` whose ``text`` is the netlist YAML, ``parsed`` the same as a dict, and
``facts`` the op / fused-op / queue counts, what each host queue holds
(``host_queues``), where each program output is (``outputs``) and which rules kept nodes
apart (``fusion_splits``). ``arch`` is ``grayskull``, ``wormhole_b0`` or ``blackhole``; it
defaults to the program's target when that is a Tenstorrent one, else ``wormhole_b0``.
``df`` picks the data format of queues and op data (``Bfp8_b``, ``Float16_b``,
``Float16``, ``Float32``, in any case; default: the program's dtype, :mod:`.arch`).
Every emitted netlist passes ``nkigym_graph.check_netlist``; the backend raises
:class:`BudaEmitError` rather than return one that does not.

Choices, documented in the modules that make them:

- ``nc_matmul(lhs[K,M], rhs[K,N])`` reads ``lhs`` transposed. A parameter read that way
  is stored transposed by the host (queue ``<name>_t``); a computed value gets a
  ``transpose`` TM on the graph op reading it (never inside a fused op) (:mod:`.nodes`).
- Scalars of ``tensor_scalar`` and the ones of row sums are constant host queues
  (:mod:`.constants`); :func:`netlist_inputs` fills every host queue from the program's
  inputs, :func:`run_netlist` evaluates the netlist in numpy.
- Shapes that are not whole tiles are zero-padded in queues; a ``[P, 1]`` reduction
  result is tile column 0, as in Buda. Values in the padding of computed tensors are
  unspecified (matmuls contract them against zero padding); a row maximum or minimum
  over a row that ends inside a tile masks the padding to the lowest value first
  (:mod:`.lowering`, :mod:`.constants`).
- A ``[P, 1]`` column or ``[1, F]`` row operand (``tensor_scalar(x, column)``,
  ``tensor_tensor(x, row)``, ``activation``'s bias column) is input 1 of an add, subtract
  or multiply, spread by ``tile_broadcast`` and ``broadcast`` TMs (:mod:`.layout`), its
  padding masked where it spreads over a row or column that ends inside a tile; divide
  multiplies by its reciprocal, maximum and minimum read it spread into a whole tensor.
  A program may still spread a column by hand as ``nc_matmul(nc_transpose(v), ones)``,
  which becomes a fused matmul sub-op reading ``v`` as is.
- Tile-level programs are lifted back to tensor-level ops first (:mod:`.lift`), so
  programs tiled for a Tenstorrent target, for Trn2, or rewritten by transforms all emit.
- A stitched parameter (``weight_stitch``) is one host queue. A netlist cannot read a
  column range of an input, so its weights are read together: the sum of ``x @ w_i``
  over all of them is one matmul of ``x`` repeated (``broadcast: {c: N}``) and the
  stitched queue's column blocks stacked in rows (``hslice: N``, ``vstack: N``), one
  input buffer for all the weights; any other use of a stitched weight raises
  :class:`BudaEmitError` saying so (:mod:`.stitched`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nkigym_graph import hookimpl
from nkigym_graph.ir.arguments import require_type
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.targets import Target
from nkigym_graph.plugin.protocols import Artifact, Backend

from .arch import get_arch
from .emit import emit_netlist
from .errors import BudaEmitError
from .host import netlist_inputs, program_outputs, run_netlist
from .lift import lift

DEFAULT_ARCH = "wormhole_b0"


class BudaBackend(Backend):
    """Emit a checked Buda netlist (see the package docstring)."""

    name = "buda"

    def emit(self, program: Program, target: Target, **options: Any) -> Artifact:
        arch = options.pop("arch", None)
        allow_over_limit = options.pop("allow_over_limit", False)
        require_type(allow_over_limit, bool, "allow_over_limit", BudaEmitError, "True or False")
        df = options.pop("df", None)
        if options:
            raise BudaEmitError(
                f"unknown option(s) {sorted(options)} for the buda backend; "
                "it takes arch=, df= and allow_over_limit="
            )
        if arch is None:
            arch = target if target.family == "tenstorrent" else DEFAULT_ARCH
        dtypes = {param.dtype for param in program.params}
        dtype = dtypes.pop() if len(dtypes) == 1 else None
        return emit_netlist(program, get_arch(arch, dtype, df), allow_over_limit)

    def run(self, artifact: Artifact, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """The netlist evaluated in numpy (:func:`run_netlist`)."""
        return dict(run_netlist(artifact, inputs))


@hookimpl
def nkigym_graph_register_backends() -> list[type[Backend]]:
    return [BudaBackend]


__all__ = ["BudaBackend", "BudaEmitError", "lift", "netlist_inputs", "program_outputs", "run_netlist"]
