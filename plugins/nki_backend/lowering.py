"""How each op becomes NKI instructions: one small lowering object per op, in a table.

=================  =====================================================================
op                 instructions
=================  =====================================================================
``alloc``          ``out = nl.ndarray(shape, dtype=..., buffer=nl.shared_hbm)``
``load``           ``nisa.dma_copy(dst=tile, src=param[...])``
``store``          ``nisa.dma_copy(dst=out[...], src=tile)`` (PSUM evicted first)
``nc_matmul``      ``nisa.nc_matmul(dst=psum, stationary=lhs, moving=rhs)``; ``+=`` steps
                   accumulate in the same PSUM tile (the first write overwrites)
``nc_transpose``   ``nisa.nc_transpose`` into a PSUM tile, then ``nisa.tensor_copy``
                   (a group of transposes of one tile: into the columns of one PSUM tile,
                   copied at once)
``activation``     ``nisa.activation(dst, op=nl.<f>, data, bias=b, scale=s)`` (b, s numbers)
``activation_bias`` ``nisa.activation(dst, op=nl.<f>, data, bias=column, scale=s)``
``tensor_tensor``  ``nisa.tensor_tensor(dst, data1, data2, op=nl.<f>)``; the last of a
                   chain (:mod:`.fusion`) ``nisa.scalar_tensor_tensor`` s or the chain's
                   own instructions, as the engine model prefers (:mod:`.scalar_tensor`)
``tensor_row``     ``nisa.tensor_tensor`` with the row spread over the partitions
                   (:mod:`.spread`: a ones matmul, once per row); chains as above; an
                   addition may be a DMA adding the row in place, or at the store
``tensor_scalar``  ``nisa.tensor_scalar(dst, data, op0=nl.<f>, operand0=c)``
``tensor_column``  ``nisa.tensor_scalar(dst, data, op0=nl.<f>, operand0=column)``
``tensor_reduce``  ``nisa.tensor_reduce(dst, op=nl.<f>, data, axis=1, keepdims=True)``;
                   a mean then divides by the count (``nisa.tensor_scalar``); a sum may be
                   a Scalar Engine copy's ``reduce_res``, and a row's sum and squares' sum
                   ``nisa.bn_stats`` / ``nisa.bn_aggr`` (:mod:`.moments`), where the engine
                   model prefers them
``affine_select``  ``nisa.affine_select`` on the GpSimd Engine (:mod:`.select`)
=================  =====================================================================

``+=`` on a load or store is a DMA with ``dst_rmw_op=nl.add``; on a Vector/Scalar Engine
op the result goes to a scratch tile that ``nisa.tensor_tensor`` adds in.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from nkigym_graph.ir.literals import format_literal
from nkigym_graph.ir.slices import overlaps
from nkigym_graph.ir.statement import Statement
from nkigym_graph.ir.variables import INTERMEDIATE

from .builder import KernelBuilder, Lowering, elements_of
from .coverage import covers
from .engines import CHOICES, RECIPE, SCALAR, VECTOR
from .errors import NkiEmitError
from .ir import Arg, Hbm, Ref, Tile, const_slices, whole
from .names import BINARY_OPS, MEAN_REDUCTIONS, REDUCE_OPS, UNARY_OPS, math_op
from .scalar_tensor import lower_chain
from .select import AffineSelectLowering
from .spread import spread_row

SUM_REDUCTIONS = frozenset({"sum", "mean"})
"""Reductions the Scalar Engine's reduce registers compute (a mean divides after)."""
ZERO_FILL_COLUMNS = 2048
"""Free size of the zero tile used to clear outputs that stores do not fully cover."""


class _Base:
    op_name = ""
    psum_native = False
    """Writes PSUM and accumulates there itself (the variable can live in PSUM)."""
    sinks = False
    """May move down to just before its first dependent statement."""
    sbuf_operands: frozenset[int] = frozenset()
    """Operand positions that must be read from SBUF (PSUM is evicted first)."""
    engines: tuple[str, ...] = ()
    """The engines its instruction may run on (:mod:`.engines`); empty: its op's engine."""


class AllocLowering(_Base):
    """An HBM output; zero-filled first when stores do not write all of it (the program's
    outputs start as zeros)."""

    op_name = "alloc"

    def lower(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        var = stmt.dst.var
        shape = tuple(stop for _, stop in stmt.dst.slices)
        tensor = kb.declare_output(var, shape)
        dtype = kb.types.outputs[var]
        kb.assign(tensor.name, f"nl.ndarray({shape!r}, dtype=nl.{dtype}, buffer=nl.shared_hbm)")
        if not _fully_stored(kb, var, node, shape):
            _zero_fill(kb, tensor, dtype)


def _fully_stored(kb: KernelBuilder, var: str, node: int, shape: tuple[int, ...]) -> bool:
    regions = []
    for writer in kb.program.writers_of(var):
        stmt = kb.program[writer]
        if writer == node:
            continue
        if stmt.accumulate:
            return False
        regions.append(stmt.dst.slices)
    return covers(shape, regions)


def _zero_fill(kb: KernelBuilder, tensor: Hbm, dtype: str) -> None:
    if len(tensor.shape) != 2:
        raise NkiEmitError(f"cannot zero-fill the {len(tensor.shape)}-D output {tensor.name}")
    rows, cols = tensor.shape
    part = kb.target.partition_size
    width = min(cols, ZERO_FILL_COLUMNS)
    zeros = kb.new_tile(f"{tensor.name}_zeros", (min(rows, part), width), f"nl.{dtype}", "sbuf")
    kb.call("nisa.memset", ("dst", Ref(zeros, whole(zeros.shape))), ("value", "0.0"))
    for r0 in range(0, rows, part):
        r1 = min(r0 + part, rows)
        for c0 in range(0, cols, width):
            c1 = min(c0 + width, cols)
            dst = Ref(tensor, const_slices(((r0, r1), (c0, c1))))
            src = Ref(zeros, const_slices(((0, r1 - r0), (0, c1 - c0))))
            kb.call("nisa.dma_copy", ("dst", dst), ("src", src))


class LoadLowering(_Base):
    op_name = "load"
    sinks = True

    def lower(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        src = kb.hbm_ref(stmt.operands[0], kb.describe(node))
        dst = kb.write(stmt.dst)
        _dma(kb, stmt, dst, src)


class StoreLowering(_Base):
    op_name = "store"
    sbuf_operands = frozenset({0})

    def lower(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        src = kb.read(stmt.operands[0], kb.describe(node), sbuf=True)
        dst = kb.hbm_ref(stmt.dst, kb.describe(node))
        _dma(kb, stmt, dst, src, adds=stmt.operands[0].var in kb.added_by_store)


def _dma(kb: KernelBuilder, stmt: Statement, dst: Ref, src: Ref, adds: bool = False) -> None:
    if stmt.accumulate or adds:
        kb.call("nisa.dma_copy", ("dst", dst), ("src", src), ("dst_rmw_op", "nl.add"))
    else:
        kb.call("nisa.dma_copy", ("dst", dst), ("src", src))


class MatmulLowering(_Base):
    """``dst[M,N] (+)= lhs[K,M].T @ rhs[K,N]``: lhs is the stationary operand."""

    op_name = "nc_matmul"
    psum_native = True
    sbuf_operands = frozenset({0, 1})

    def lower(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        text = kb.describe(node)
        stationary = kb.read(stmt.operands[0], text, sbuf=True)
        moving = kb.read(stmt.operands[1], text, sbuf=True)
        var = stmt.dst.var
        if kb.in_psum(var):
            dst = kb.write(stmt.dst)
            # a rotating PSUM buffer was written before: a planned kernel's first write overwrites
            overwrite = not stmt.accumulate and (kb.planned or kb.program.definition_of(var) != node)
            extra = (("accumulate", "False"),) if overwrite else ()
            kb.call("nisa.nc_matmul", ("dst", dst), ("stationary", stationary), ("moving", moving), *extra)
            return
        shape = tuple(stop - start for start, stop in stmt.dst.slices)
        scratch = kb.new_tile(f"{var}_psum", shape, "nl.float32", "psum")
        result = Ref(scratch, whole(shape))
        kb.call("nisa.nc_matmul", ("dst", result), ("stationary", stationary), ("moving", moving))
        kb.store_result(stmt, result)


class TransposeLowering(_Base):
    """Tensor Engine transpose into a PSUM tile (of the input's dtype), then a copy. In a
    planned kernel a transpose writes its slot directly (a ``psum.<dtype>`` slot of its
    input's dtype, or an fp32 ``psum`` slot for an fp32 input); one accumulated into
    (``+=``) writes one scratch tile per shape and dtype, which the plan keeps room for
    (``scheduling.allocate.psum_scratch_bytes``), and is added in."""

    op_name = "nc_transpose"
    sbuf_operands = frozenset({0})

    def lower(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        group = kb.fusions.transposes_of.get(node)
        if group is not None:
            _transpose_group(kb, [kb.program[member] for member in group], kb.describe(node))
            return
        data = kb.read(stmt.operands[0], kb.describe(node), sbuf=True)
        shape = tuple(stop - start for start, stop in stmt.dst.slices)
        dtype = kb.dtype_of(data)
        if kb.planned and stmt.dst.var in kb.slots:
            target = kb.write(stmt.dst)
            if stmt.dst.var in kb.psum_written_directly:  # its slot has the input's dtype
                kb.call("nisa.nc_transpose", ("dst", target), ("data", data))
                return
            scratch = kb.constant_tile(("transpose", shape, dtype), "transpose_psum", shape, dtype, "psum")
        else:
            scratch = kb.new_tile(f"{stmt.dst.var}_psum", shape, dtype, "psum")
        result = Ref(scratch, whole(shape))
        kb.call("nisa.nc_transpose", ("dst", result), ("data", data))
        kb.store_result(stmt, result)


def _transpose_group(kb: KernelBuilder, members: list[Statement], text: str) -> None:
    """Transposes of column blocks of one tile into the columns of one PSUM tile, copied
    to SBUF at once; each result is its columns of the copy (``KernelBuilder.views``)."""
    datas = [kb.read(stmt.operands[0], text, sbuf=True) for stmt in members]
    rows, cols = (stop - start for start, stop in members[0].dst.slices)
    width = cols * len(members)
    dtype = kb.dtype_of(datas[0])
    scratch = kb.new_tile(f"{members[0].dst.var}_psum", (rows, width), dtype, "psum")
    for index, data in enumerate(datas):
        part = Ref(scratch, const_slices(((0, rows), (index * cols, (index + 1) * cols))))
        kb.call("nisa.nc_transpose", ("dst", part), ("data", data))
    copy = kb.new_tile(f"{members[0].dst.var}_sb", (rows, width), kb.types.working_code, "sbuf")
    kb.call(
        "nisa.tensor_copy", ("dst", Ref(copy, whole(copy.shape))), ("src", Ref(scratch, whole(scratch.shape)))
    )
    for index, stmt in enumerate(members):
        kb.views[stmt.dst.var] = (copy, index * cols)


class ActivationLowering(_Base):
    """``op(data * scale + bias)`` in one Scalar Engine instruction; a bias column or
    number and a scale number are the instruction's own ``bias`` and ``scale``. A row
    sum of the result (:mod:`.fusion`) is the instruction's ``reduce_res``."""

    op_name = "activation"

    def lower(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        text = kb.describe(node)
        values = stmt.op.attr_values(stmt.attrs)
        func = math_op(UNARY_OPS, values["op"], text)
        data = kb.read(stmt.operands[0], text)
        bias = kb.read(stmt.operands[1], text) if len(stmt.op.read_positions) > 1 else values.get("bias", 0.0)
        extra: list[tuple[str, Arg]] = []
        if isinstance(bias, Ref) or bias != 0:
            extra.append(("bias", bias if isinstance(bias, Ref) else format_literal(bias)))
        if values["scale"] != 1:
            extra.append(("scale", format_literal(values["scale"])))
        dst, finish = kb.destination(stmt)
        fused = kb.fusions.reduce_of.get(node)
        if fused is None:
            kb.call("nisa.activation", ("dst", dst), ("op", func), ("data", data), *extra)
            finish()
            return
        total = kb.program[fused]
        total_dst, finish_total = kb.destination(total)
        extra += [
            ("reduce_op", "nl.add"),
            ("reduce_res", total_dst),
            ("reduce_cmd", "nisa.reduce_cmd.reset_reduce"),
        ]
        kb.call("nisa.activation", ("dst", dst), ("op", func), ("data", data), *extra)
        finish()
        _divide_mean(kb, total, total_dst)
        finish_total()


class ActivationBiasLowering(ActivationLowering):
    op_name = "activation_bias"


class TensorTensorLowering(_Base):
    """Both inputs may not be in PSUM: the second is then read from its SBUF copy. The
    last statement of a chain (:mod:`.fusion`) lowers the chain (:mod:`.scalar_tensor`)."""

    op_name = "tensor_tensor"
    engines = CHOICES["nisa.tensor_tensor"]

    def lower(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        text = kb.describe(node)
        chain = kb.fusions.chains.get(node)
        if chain is not None:
            lower_chain(kb, chain, text)
        else:
            self.lower_alone(node, stmt, kb)

    def lower_alone(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        """The statement's own ``nisa.tensor_tensor``."""
        text = kb.describe(node)
        func = math_op(BINARY_OPS, stmt.attr("op"), text)
        first = kb.read(stmt.operands[0], text)
        second = self.tensor_operand(kb, stmt, text, first)
        dst, finish = kb.destination(stmt)
        kb.call("nisa.tensor_tensor", ("dst", dst), ("data1", first), ("data2", second), ("op", func))
        finish()

    def tensor_operand(self, kb: KernelBuilder, stmt: Statement, text: str, data: Ref) -> Ref:
        """The instruction's second input, beside ``data`` (from SBUF when ``data`` is in PSUM)."""
        return kb.read(stmt.operands[1], text, sbuf=kb.is_psum(data))


class TensorRowLowering(TensorTensorLowering):
    """``data <op> row`` with the ``[1, F]`` row spread over the data's partitions first.
    An addition whose ``data`` tile nothing else reads may instead be a DMA that adds the
    spread row into that tile in place (``nisa.dma_copy(..., dst_rmw_op=nl.add)``, on the
    inbound DMA ring, which a row-wise kernel leaves idle part of the time), where the
    strand's recipe says so (:class:`.engines.Recipe`, ``dma_add``); or, where the recipe
    says ``at_store`` and the result's only reader is its store, a DMA storing the row to
    the output region and the store adding the tile into it (both on the outbound ring;
    the row's store needs nothing computed, so it runs in the ring's idle time)::

        y = tensor_tensor(t, beta, op="add")    nisa.dma_copy(dst=out[r], src=beta_spread)
        out[r] = y                              ...
                                                nisa.dma_copy(dst=out[r], src=t, dst_rmw_op=nl.add)
    """

    op_name = "tensor_row"
    engines = ()

    def tensor_operand(self, kb: KernelBuilder, stmt: Statement, text: str, data: Ref) -> Ref:
        partitions = stmt.operands[0].slices[0][1] - stmt.operands[0].slices[0][0]
        return spread_row(kb, stmt.operands[1], partitions, text)

    def lower_alone(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        recipe = kb.engines.recipe
        if recipe is None or not recipe.dma_add or kb.engines.policy != RECIPE:
            super().lower_alone(node, stmt, kb)
            return
        data = _in_place(kb, node, stmt)
        if data is None:
            super().lower_alone(node, stmt, kb)
            return
        store = _sole_store(kb, node, stmt) if recipe.at_store else None
        row = self.tensor_operand(kb, stmt, kb.describe(node), data)
        if store is None:
            kb.call("nisa.dma_copy", ("dst", data), ("src", row), ("dst_rmw_op", "nl.add"))
        else:  # the row to the output region now, the store adds the data into it
            region = kb.hbm_ref(kb.program[store].dst, kb.describe(store))
            kb.call("nisa.dma_copy", ("dst", region), ("src", row))
            kb.added_by_store.add(stmt.dst.var)
        assert isinstance(data.base, Tile)
        kb.views[stmt.dst.var] = (data.base, 0)


def _sole_store(kb: KernelBuilder, node: int, stmt: Statement) -> int | None:
    """The store of ``stmt``'s whole result when that is its only reader, writes (not adds
    to) its output region, and no statement between ``stmt`` and it reads or writes that
    region (None otherwise): the row stored there at ``stmt`` stays until the store."""
    program = kb.program
    readers = program.consumers_of(stmt.dst.var)
    if len(readers) != 1 or readers[0][1] != 0:
        return None
    at = readers[0][0]
    store = program[at]
    if store.op.name != "store" or store.accumulate or store.operands[0].slices != stmt.dst.slices:
        return None
    region = store.dst
    between = range(program.position(node) + 1, program.position(at))
    others = {*program.writers_of(region.var), *(reader for reader, _ in program.consumers_of(region.var))}
    for other in others - {at}:
        mentions = (o for o in program[other].operands if o.var == region.var)
        if program.position(other) in between and any(overlaps(o.slices, region.slices) for o in mentions):
            return None
    return at


def _in_place(kb: KernelBuilder, node: int, stmt: Statement) -> Ref | None:
    """The tile of ``stmt``'s data when ``stmt`` (an addition, not ``+=``) may write its
    result into it: a whole SBUF tile of an intermediate variable written once and read
    only by ``stmt``, of the result's shape, the result an intermediate written once."""
    program = kb.program
    data_op, dst = stmt.operands[0], stmt.dst
    if stmt.attr("op") != "add" or stmt.accumulate or kb.planned:
        return None
    for var in (data_op.var, dst.var):
        info = program.variables[var]
        if info.kind != INTERMEDIATE or len(program.writers_of(var)) != 1 or var in kb.views:
            return None
    if program.consumers_of(data_op.var) != ((node, 0),) or data_op.var in kb.psum_vars:
        return None
    tile = kb.tiles.get(data_op.var)
    shape = tuple(stop - start for start, stop in dst.slices)
    if tile is None or tile.shape != shape or data_op.slices != dst.slices:
        return None
    if any(start != 0 for start, _ in dst.slices) or program.variables[dst.var].shape != shape:
        return None
    return kb.read(data_op, kb.describe(node))


class TensorScalarLowering(_Base):
    """A number, or a ``[P, 1]`` column (``tensor_column``), as ``operand0``; the
    statement producing its data, when fused (:mod:`.fusion`), as ``op0`` and it as ``op1``."""

    op_name = "tensor_scalar"
    engines = CHOICES["nisa.tensor_scalar"]

    def lower(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        text = kb.describe(node)
        steps = [stmt]
        first = kb.fusions.first_of.get(node)
        if first is not None:
            steps.insert(0, kb.program[first])
        data = kb.read(steps[0].operands[0], text)
        args: list[tuple[str, Arg]] = []
        for index, step in enumerate(steps):
            args.append((f"op{index}", math_op(BINARY_OPS, step.attr("op"), text)))
            args.append((f"operand{index}", _scalar_operand(kb, step, text)))
        dst, finish = kb.destination(stmt)
        kb.call("nisa.tensor_scalar", ("dst", dst), ("data", data), *args)
        finish()


def _scalar_operand(kb: KernelBuilder, stmt: Statement, text: str) -> Arg:
    """``tensor_scalar``'s number, or ``tensor_column``'s column."""
    if len(stmt.op.read_positions) > 1:
        return kb.read(stmt.operands[1], text)
    return format_literal(stmt.attr("scalar"))


class TensorColumnLowering(TensorScalarLowering):
    op_name = "tensor_column"


class TensorReduceLowering(_Base):
    """Reduce the free axis into a [P, 1] tile; a mean divides the sum by the count; a
    negation of the result, when fused (:mod:`.fusion`), is the instruction's ``negate``.
    A sum may instead be the row sum of a Scalar Engine copy (``nisa.activation`` with
    ``op=nl.copy`` and ``reduce_res``, the copy itself discarded) where the engine model's
    policy prefers that engine (:func:`.engines.EngineLoads.prefer`; never with ``fixed``)."""

    op_name = "tensor_reduce"

    def lower(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        text = kb.describe(node)
        func = math_op(REDUCE_OPS, stmt.attr("op"), text)
        data = kb.read(stmt.operands[0], text)
        negation = kb.fusions.negation_of.get(node)
        written = stmt if negation is None else kb.program[negation]
        dst, finish = kb.destination(written)
        if negation is None and _sums_on_scalar(kb, stmt, data):
            shape = tuple(stop - start for start, stop in stmt.operands[0].slices)
            copy = kb.new_tile(f"{stmt.dst.var}_copy", shape, kb.types.working_code, "sbuf")
            kb.call(
                "nisa.activation",
                ("dst", Ref(copy, whole(shape))),
                ("op", "nl.copy"),
                ("data", data),
                ("reduce_op", "nl.add"),
                ("reduce_res", dst),
                ("reduce_cmd", "nisa.reduce_cmd.reset_reduce"),
            )
            _divide_mean(kb, stmt, dst)
            finish()
            return
        extra = (("negate", "True"),) if negation is not None else ()
        kb.call(
            "nisa.tensor_reduce",
            ("dst", dst),
            ("op", func),
            ("data", data),
            ("axis", "1"),
            *extra,
            ("keepdims", "True"),
        )
        _divide_mean(kb, stmt, dst)
        finish()


def _sums_on_scalar(kb: KernelBuilder, stmt: Statement, data: Ref) -> bool:
    """Whether a sum (or mean) reduction of ``data`` goes to the Scalar Engine (its data
    not in PSUM, which the copy would only move). A planned kernel keeps the plan's
    instructions, which the cost model times (``nkigym_graph.cost.kernel_timing``)."""
    if stmt.attr("op") not in SUM_REDUCTIONS or kb.engines.policy == "fixed" or kb.planned:
        return False
    if kb.is_psum(data):
        return False
    engine = kb.engines.prefer((VECTOR, SCALAR), elements_of(data), 1, [id(data.base)])
    return engine == SCALAR


def _divide_mean(kb: KernelBuilder, stmt: Statement, total: Ref) -> None:
    """A mean's sum, in ``total``, divided by the number of elements summed."""
    if stmt.attr("op") in MEAN_REDUCTIONS:
        (_, _), (f0, f1) = stmt.operands[0].slices
        count = format_literal(f1 - f0)
        kb.call(
            "nisa.tensor_scalar", ("dst", total), ("data", total), ("op0", "nl.divide"), ("operand0", count)
        )


LOWERINGS: Mapping[str, Lowering] = MappingProxyType(
    {
        lowering.op_name: lowering
        for lowering in (
            AllocLowering(),
            LoadLowering(),
            StoreLowering(),
            MatmulLowering(),
            TransposeLowering(),
            ActivationLowering(),
            ActivationBiasLowering(),
            TensorTensorLowering(),
            TensorRowLowering(),
            TensorScalarLowering(),
            TensorColumnLowering(),
            TensorReduceLowering(),
            AffineSelectLowering(),
        )
    }
)
"""Op name -> lowering. Plugins adding ops extend a copy and pass it to the emitter."""
