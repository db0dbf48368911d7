"""A chain of column steps and ``tensor_tensor`` s as ``nisa.scalar_tensor_tensor`` s.

``scalar_tensor_tensor`` computes ``(data <op0> operand0) <op1> operand1`` (a number or a
``[P, 1]`` column, then a tile like ``data``) in one pass of the Vector Engine, at the
price of a two-input ``tensor_tensor``. A chain (:mod:`.fusion`) is a ``tensor_scalar`` of
one or two column steps and as many ``tensor_tensor`` s after it; the layer norm's
normalisation, for instance::

    t = tensor_scalar(x, mean, rstd, op0=subtract, op1=multiply)   # any engine
    u = tensor_tensor(t, gamma, op=multiply)                       # Vector or GpSimd
    v = tensor_tensor(u, beta, op=add)                             # Vector or GpSimd

becomes, the multiply by ``rstd`` moved past the one by ``gamma`` (they commute)::

    w = scalar_tensor_tensor(x, op0=subtract, operand0=mean, op1=multiply, operand1=gamma)
    v = scalar_tensor_tensor(w, op0=multiply, operand0=rstd, op1=add, operand1=beta)

Two Vector passes instead of three passes the Scalar and GpSimd Engines can share: which
is faster depends on how busy each engine is, so the chain is lowered whichever way the
engine model (:mod:`.engines`, its policy) prefers at that point of the kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from nkigym_graph.ir.literals import format_literal
from nkigym_graph.ir.statement import Statement

from .builder import KernelBuilder, elements_of
from .engines import CHOICES, RECIPE, VECTOR, EngineLoads, reachable
from .errors import NkiEmitError
from .ir import Arg, Ref, whole
from .names import BINARY_OPS, math_op


@runtime_checkable
class TensorStep(Protocol):
    """What a chain needs of the lowering of each of its ``tensor_tensor`` s."""

    def tensor_operand(self, kb: KernelBuilder, stmt: Statement, text: str, data: Ref) -> Ref:
        """The tile ``data`` meets element by element (``operand1``)."""
        ...

    def lower_alone(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        """The statement's own instruction."""
        ...


def _step(kb: KernelBuilder, node: int, text: str) -> TensorStep:
    lowering = kb.lowering(node)
    if not isinstance(lowering, TensorStep):
        raise NkiEmitError(f"the lowering of {kb.program[node].op.name!r} cannot end a chain", text)
    return lowering


def lower_chain(kb: KernelBuilder, chain: Sequence[int], text: str) -> None:
    """Lower ``chain`` (a ``tensor_scalar`` and its ``tensor_tensor`` s, last one last) as
    ``scalar_tensor_tensor`` s or as its statements' own instructions."""
    program = kb.program
    scalar, tensors = chain[0], [program[n] for n in chain[1:]]
    columns = [program[kb.fusions.first_of[scalar]]] if scalar in kb.fusions.first_of else []
    columns.append(program[scalar])
    data = kb.read(columns[0].operands[0], text)
    scalars = [_column_operand(kb, step, text) for step in columns]
    operands = [_step(kb, n, text).tensor_operand(kb, program[n], text, data) for n in chain[1:]]
    if not fused_first(kb.engines, data, scalars, operands):
        kb.lowering(scalar).lower(scalar, program[scalar], kb)
        for node in chain[1:]:
            _step(kb, node, text).lower_alone(node, program[node], kb)
        return
    current = data
    for index, (step, stmt, operand) in enumerate(zip(columns, tensors, operands, strict=True)):
        if stmt is tensors[-1]:
            dst, finish = kb.destination(stmt)
        else:
            shape = tuple(stop - start for start, stop in stmt.dst.slices)
            dst = Ref(
                kb.new_tile(f"{stmt.dst.var}_fused", shape, kb.types.working_code, "sbuf"), whole(shape)
            )
        kb.call(
            "nisa.scalar_tensor_tensor",
            ("dst", dst),
            ("data", current),
            ("op0", math_op(BINARY_OPS, step.attr("op"), text)),
            ("operand0", scalars[index]),
            ("op1", math_op(BINARY_OPS, stmt.attr("op"), text)),
            ("operand1", operand),
        )
        current = dst
    finish()  # the last step's (``+=``: adds its result in)


def _column_operand(kb: KernelBuilder, stmt: Statement, text: str) -> Arg:
    """A ``tensor_scalar``'s number, or a ``tensor_column``'s ``[P, 1]`` column."""
    if len(stmt.op.read_positions) > 1:
        return kb.read(stmt.operands[1], text)
    return format_literal(stmt.attr("scalar"))


def fused_first(loads: EngineLoads, data: Ref, scalars: Sequence[Arg], operands: Sequence[Ref]) -> bool:
    """Whether the engine model's policy prefers the ``scalar_tensor_tensor`` s to the
    chain's own instructions, each way priced on a copy of the loads (the policy
    ``fixed``, which keeps instructions on their default engines, never fuses; the policy
    ``recipe`` fuses where the strand's recipe says so)."""
    if loads.policy == "fixed":
        return False
    if loads.recipe is not None and loads.policy == RECIPE:
        return loads.recipe.fused
    elements = elements_of(data)
    columns = [[id(s.base)] if isinstance(s, Ref) else [] for s in scalars]
    tiles = [id(o.base) for o in operands]
    psum = any(KernelBuilder.is_psum(r) for r in (data, *operands))
    fused, own, finished, previous = loads.copy(), 0.0, 0.0, id(data.base)
    for index, tile in enumerate(tiles):
        reads = [previous, tile, *columns[index]]
        finished = fused.run(VECTOR, elements, 2, reads, -1 - index)
        own += fused.time_ns(VECTOR, elements, 2)
        previous = -1 - index
    plain, plain_own = loads.copy(), 0.0
    options = reachable(CHOICES["nisa.tensor_scalar"], psum)
    engine = plain.choose(options, elements, 1, [id(data.base), *(c for cs in columns for c in cs)], -10)
    plain_own += plain.time_ns(engine, elements, 1)
    previous, plain_finished = -10, 0.0
    for index, tile in enumerate(tiles):
        options = reachable(CHOICES["nisa.tensor_tensor"], psum)
        engine = plain.choose(options, elements, 2, [previous, tile], -11 - index)
        plain_own += plain.time_ns(engine, elements, 2)
        previous = -11 - index
        plain_finished = plain.ready[previous]
    return fused.preference(finished, own) < plain.preference(plain_finished, plain_own)
