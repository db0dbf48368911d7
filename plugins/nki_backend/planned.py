"""Lowering a scheduled program: its kernel plan, step by step, in rotating buffers.

A program with a schedule is emitted from its kernel plan (``nkigym_graph.scheduling``):
every stream of the plan becomes a list of buffers declared once at the top,

    load_a = [nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf) for _ in range(16)]
    psum = [nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum) for _ in range(4)]

and every step of the plan -- a statement of the kernel program, or a load run again --
is lowered by its op's lowering with each variable read from or written to its slot
(``psum[2][0:128, 0:512]``), in the plan's order. A Tensor Engine result's first write
overwrites its buffer (``accumulate=False``: the buffer held another tile before); the
plan already made PSUM evictions explicit. Loop rolling then folds the repetition, slot
indices included, as for any kernel.
"""

from __future__ import annotations

from collections.abc import Mapping

from nkigym_graph.ir.targets import Target
from nkigym_graph.scheduling.allocate import psum_written_directly
from nkigym_graph.scheduling.plan import KernelPlan

from .builder import KernelBuilder, KernelTypes, Lowering, statement_text
from .errors import NkiEmitError
from .ir import Pool
from .names import NKI_ITEMSIZE, identifier, nki_dtype


def lower_plan(
    plan: KernelPlan,
    target: Target,
    types: KernelTypes,
    lowerings: Mapping[str, Lowering],
    engine_policy: str = "fixed",
) -> KernelBuilder:
    """Lower ``plan``; the builder holds the groups and HBM tensors."""
    program = plan.program
    kb = KernelBuilder(program, target, types, lowerings, engine_policy)
    kb.planned = True
    kb.psum_vars = plan.psum
    kb.psum_written_directly = psum_written_directly(program)
    pools = {
        name: _pool(kb, stream.name, stream.shape, stream.dtype, stream.buffer, stream.buffers)
        for name, stream in plan.streams.items()
    }
    kb.open(
        "alloc", "rotating buffers: " + ", ".join(f"{s.name} x{s.buffers}" for s in plan.streams.values())
    )
    for pool in pools.values():
        kb.assign(pool.name, pool.declaration())
    kb.close()
    for step in plan.steps:
        for var, slot in step.slots:
            kb.slots[var] = (pools[slot.stream], slot.number)
        stmt = program[step.node]
        lowering = kb.lowering(step.node)
        comment = statement_text(program, step.node)
        kb.open(
            stmt.op.name, f"{comment}  (again: its buffer was reused)" if step.reload else comment, step.node
        )
        lowering.lower(step.node, stmt, kb)
        kb.close()
    for var in program.returns:
        if var not in kb.hbm:
            raise NkiEmitError(f"the kernel returns {var!r}, which is not an HBM output tensor")
    return kb


def _pool(
    kb: KernelBuilder, stream: str, shape: tuple[int, ...], dtype: str, buffer: str, count: int
) -> Pool:
    name = kb.names.fresh(identifier(stream.replace(".", "_")))
    if stream.startswith("load."):
        param = kb.hbm[stream.removeprefix("load.")].name
        code, size = f"{param}.dtype", NKI_ITEMSIZE[kb.types.params[param]]
    else:
        nki = nki_dtype(dtype, f"stream {stream!r}")
        code, size = f"nl.{nki}", NKI_ITEMSIZE[nki]
    return Pool(name, tuple(shape), code, buffer, count, size)
