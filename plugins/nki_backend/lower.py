"""Lowering a whole program: statement order, accumulator allocations, per-op lowerings
and PSUM evictions, into a flat list of instruction groups."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Statement
from nkigym_graph.ir.targets import Target
from nkigym_graph.ir.variables import INTERMEDIATE, OUTPUT

from .builder import KernelBuilder, KernelTypes, Lowering, statement_text
from .engines import SCALAR, VECTOR, Recipe, reachable
from .errors import NkiEmitError
from .fusion import plan_fusions, sums_activation
from .moments import lower_moments, plan_moments
from .names import identifier, nki_dtype
from .pipeline import pipelined_order
from .schedule import allocation_points, statement_order
from .strands import strands


def kernel_types(program: Program, dtype: str | None) -> KernelTypes:
    """The kernel's dtypes; ``dtype`` (an emit option) replaces every declared one."""
    outputs = {}
    for var, info in program.variables.items():
        if info.kind == OUTPUT:
            outputs[var] = nki_dtype(dtype or info.dtype or "float64", f"output {var!r}")
    params = {
        identifier(p.name): nki_dtype(dtype or p.dtype, f"parameter {p.name!r}") for p in program.params
    }
    working = nki_dtype(dtype or program.output_dtype, "the program's output")
    return KernelTypes(working, outputs, params)


def lower_program(
    program: Program,
    target: Target,
    types: KernelTypes,
    lowerings: Mapping[str, Lowering],
    hoist_shared: bool = False,
    engine_policy: str = "fixed",
    pipelined: bool = False,
    priority: str = "start",
    order: list[int] | None = None,
    recipes: Sequence[Recipe | None] = (),
) -> KernelBuilder:
    """Lower ``program``; the builder holds the groups, tiles and HBM tensors.
    ``hoist_shared`` picks the statement order (:func:`.schedule.statement_order`),
    or ``pipelined`` the list-scheduled one (:mod:`.pipeline`, by ``priority``; ``order``
    when it is given, from :func:`pipelined_statements`); ``engine_policy`` how flexible
    instructions find their engine (:mod:`.engines`); with policy ``recipe``, strand ``i``
    of the program (:func:`.mix.strands`) follows ``recipes[i % len(recipes)]`` (None: each
    instruction goes where it finishes first)."""
    if program.fragment:
        raise NkiEmitError("a fragment (statements without def/return) cannot be emitted as a kernel")
    kb = KernelBuilder(program, target, types, lowerings, engine_policy)
    kb.engines.ahead.update(_fixed_work(kb))
    sinks = partial(_sinks, lowerings)
    if not pipelined:
        order = statement_order(program, sinks, hoist_shared)
    elif order is None:
        order = _pipelined(kb, priority)
    kb.fusions = plan_fusions(program, order, partial(_transpose_columns, kb))
    moments = plan_moments(program, order, kb.fusions) if engine_policy != "fixed" else {}
    done: set[int] = set()
    shared = [
        var
        for var, info in program.variables.items()
        if info.kind == INTERMEDIATE and len(program.writers_of(var)) > 1
    ]
    points = allocation_points(program, order, shared, feeding_run=not pipelined)
    last_write = {program.writers_of(var)[-1]: var for var in kb.psum_vars if kb.needs_eviction(var)}
    strand_of = strands(program) if recipes else {}
    for position, node in enumerate(order):
        strand = strand_of.get(node)
        kb.engines.recipe = None if strand is None else recipes[strand % len(recipes)]
        for var in points.get(position, ()):
            kb.open("alloc", f"{var}: written by {len(program.writers_of(var))} statements below")
            kb.allocate(var)
            kb.close()
        stmt = program[node]
        lowering = kb.lowering(node)
        if node in kb.fusions.absorbed or node in done:
            continue  # done by another statement's instruction
        group = moments.get(node)
        if group is not None:
            kb.open("moments", statement_text(program, node), node)
            taken = lower_moments(kb, group, statement_text(program, node))
            kb.close()
            if taken:
                done.update(group.members)
                continue
        kb.open(stmt.op.name, statement_text(program, node), node)
        lowering.lower(node, stmt, kb)
        kb.close()
        evicted = last_write.get(node)
        if evicted is not None:
            kb.open("evict", f"{evicted}: evict PSUM to SBUF for the readers below")
            kb.evict(evicted)
            kb.close()
    for var in program.returns:
        if var not in kb.hbm or program.variables[var].kind != OUTPUT:
            raise NkiEmitError(f"the kernel returns {var!r}, which is not an HBM output tensor")
    return kb


def pipelined_statements(
    program: Program, target: Target, types: KernelTypes, lowerings: Mapping[str, Lowering], priority: str
) -> list[int]:
    """The list-scheduled statement order of ``program`` by ``priority`` (it does not depend
    on the engine policy: lowerings by several policies share it)."""
    return _pipelined(KernelBuilder(program, target, types, lowerings), priority)


def _pipelined(kb: KernelBuilder, priority: str) -> list[int]:
    program = kb.program
    return pipelined_order(
        program,
        kb.engines.constants,
        partial(_sinks, kb.lowerings),
        _psum_room(program, kb.target),
        kb.in_psum,
        partial(_engines_of, kb),
        partial(sums_activation, program),
        priority,
    )


def _fixed_work(kb: KernelBuilder) -> dict[str, float]:
    """Per Vector and Scalar Engine, the time of the program's statements only it can run
    (as the engine model prices them; row sums an activation computes are free)."""
    work = {VECTOR: 0.0, SCALAR: 0.0}
    program = kb.program
    for node, stmt in program.items():
        engine = stmt.op.engine
        lowering = kb.lowerings.get(stmt.op.name)
        if engine not in work or getattr(lowering, "engines", None) or sums_activation(program, node):
            continue
        operands = [stmt.operands[p] for p in stmt.op.read_positions]
        elements = max(_elements(o.slices) for o in (*operands, stmt.dst))
        inputs = max(1, sum(1 for o in operands if _elements(o.slices) > 1))
        work[engine] += kb.engines.time_ns(engine, elements, inputs)
    return work


def _elements(slices: tuple[tuple[int, int], ...]) -> int:
    """Elements per partition of a region."""
    return math.prod(stop - start for start, stop in slices[1:]) if len(slices) > 1 else 1


def _psum_room(program: Program, target: Target) -> int:
    """PSUM per partition for the results the kernel holds there: all of it, less a bank
    for the scratch tiles transposes are copied out of."""
    bank = int(target.facts.get("psum_bank_bytes", 2048))
    transposes = any(stmt.op.name == "nc_transpose" for stmt in program.statements)
    return target.psum_bytes_per_partition - (bank if transposes else 0)


def _engines_of(kb: KernelBuilder, stmt: Statement) -> tuple[str, ...]:
    """The engines ``stmt``'s instruction may run on (the GpSimd Engine not with PSUM;
    operands the lowering copies to SBUF first do not count)."""
    lowering = kb.lowerings.get(stmt.op.name)
    engines = getattr(lowering, "engines", ()) or (stmt.op.engine,)
    copied: frozenset[int] = getattr(lowering, "sbuf_operands", frozenset())
    psum = any(kb.in_psum(o.var) for p, o in enumerate(stmt.operands) if p not in copied)
    return tuple(reachable(engines, psum))


def _transpose_columns(kb: KernelBuilder, stmt: Statement) -> int:
    """Columns of a transpose's result one PSUM bank holds (its input's dtype)."""
    bank = int(kb.target.facts.get("psum_bank_bytes", 2048))
    return bank // kb.sbuf_itemsize(stmt.operands[0].var)


def _sinks(lowerings: Mapping[str, Lowering], stmt: Statement) -> bool:
    lowering = lowerings.get(stmt.op.name)
    return lowering is not None and lowering.sinks
