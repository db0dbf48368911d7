"""The circular buffers of a tiled program run as one fused kernel.

A tiled program streams many tiles of a few logical tensors; a kernel gives each
logical stream one CB, whatever its tile count. The counting rule:

- **inputs**: one CB per distinct HBM parameter the program loads. Each matmul's
  weight is its own parameter, hence its own CB (seed 003); a stitched parameter is
  one CB however many weights it holds.
- **outputs**: one CB per distinct HBM output the program writes.
- **intermediates**: one CB per logical on-chip stream that crosses engines: written on
  one compute engine and read on another (``nc_matmul`` on the tensor engine feeding
  an ``activation`` on the scalar engine). Tiles read on the engine that wrote them stay
  in its registers; tiles only stored feed the output CB.

Tiles belong to one logical stream when they are computed the same way from the same
sources: a structural key per variable (op, attributes and the keys of what it reads;
a load is keyed by its parameter, and for a stitched parameter by the weight slots its
columns fall in, so ``x @ w1`` and ``x @ w2`` stay two streams after stitching).
Slices and accumulation steps do not enter the key, so every tile and K chunk of
``x @ w1`` is one stream.
"""

from __future__ import annotations

from collections.abc import Hashable

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.slices import Slices
from nkigym_graph.ir.variables import INTERMEDIATE, OUTPUT
from nkigym_graph.stitching.cb_count import KernelBuffers
from nkigym_graph.stitching.metadata import StitchMetadata
from nkigym_graph.stitching.program_stitch import stitching_of
from nkigym_graph.stitching.weight_params import find_weights

_NOT_COMPUTE = frozenset({"dma", "none"})
"""Engines that move or allocate data rather than compute on tiles."""


def _slots(metadata: StitchMetadata | None, slices: Slices) -> tuple[str, ...]:
    """The weights of a stitched parameter whose columns a load's slices touch."""
    if metadata is None or len(slices) != 2:
        return ()
    start, stop = slices[1]
    return tuple(
        name for name, slot in metadata.weights.items() if slot.col_start < stop and start < slot.col_end
    )


class _StreamKeys:
    """Structural keys of variables, interned to small ints (see the module docstring)."""

    def __init__(self) -> None:
        self._ids: dict[Hashable, int] = {}
        self._writers: dict[str, set[int]] = {}
        self.of: dict[str, int] = {}

    def intern(self, key: Hashable) -> int:
        return self._ids.setdefault(key, len(self._ids))

    def key(self, var: str) -> int:
        known = self.of.get(var)
        return known if known is not None else self.intern(("var", var))

    def written(self, var: str, signature: Hashable) -> None:
        writers = self._writers.setdefault(var, set())
        writers.add(self.intern(signature))
        self.of[var] = self.intern(frozenset(writers))


def program_kernel(program: Program) -> KernelBuffers:
    """The CBs ``program`` needs as one kernel (the rule of the module docstring)."""
    stitched = stitching_of(program)
    variables = program.variables
    statements = program
    keys = _StreamKeys()
    inputs: dict[str, None] = {}
    outputs: dict[str, None] = {}
    for stmt in statements:
        op = stmt.op
        if op.name == "alloc":
            continue
        dst = stmt.dst.var
        if op.name == "load":
            source = stmt.operands[0]
            if variables[source.var].external:
                inputs.setdefault(source.var)
            signature: Hashable = ("load", source.var, _slots(stitched.get(source.var), source.slices))
        else:
            reads = tuple(keys.key(stmt.operands[p].var) for p in op.read_positions)
            signature = (op.name, stmt.attrs, reads)
        if variables[dst].kind == OUTPUT:
            outputs.setdefault(dst)
        keys.written(dst, signature)

    streams: dict[int, str] = {}
    for var, info in variables.items():
        if info.kind != INTERMEDIATE:
            continue
        written_on = {statements[n].op.engine for n in program.writers_of(var)} - _NOT_COMPUTE
        read_on = {
            statements[n].op.engine
            for n, position in program.consumers_of(var)
            if position in statements[n].op.read_positions
        } - _NOT_COMPUTE
        if written_on and read_on - written_on:
            streams.setdefault(keys.key(var), _describe(program, var, written_on))
    groups = tuple(tuple(w.name for w in group) for group in find_weights(program).groups)
    return KernelBuffers(
        name=program.name,
        inputs=tuple(inputs),
        intermediates=tuple(streams.values()),
        outputs=tuple(outputs),
        weight_groups=groups,
    )


def _describe(program: Program, var: str, written_on: set[str]) -> str:
    """``"tensor_2 (nc_matmul on tensor -> activation on scalar)"``: the stream's first tile."""
    statements = program
    writer = statements[program.writers_of(var)[0]].op
    reader = next(
        statements[n].op
        for n, _ in program.consumers_of(var)
        if statements[n].op.engine not in written_on | _NOT_COMPUTE
    )
    return f"{var} ({writer.name} on {writer.engine} -> {reader.name} on {reader.engine})"
