"""Seed 004 "Not supported" 1-12."""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, FusedContext, NetlistContext
from nkigym_graph.buda.model import NetlistOp
from nkigym_graph.buda.optypes import (
    BINARY,
    SFPU,
    SPARSE_MATMUL_ATTRIBUTES,
    UNARY,
    UNFUSABLE,
    is_matmul_or_reduce,
)
from nkigym_graph.buda.rules.registry import fused_rule, netlist_rule
from nkigym_graph.buda.tms import broadcast_factor


@fused_rule("unsupported.1", "no splice, embedding, depthwise or sparse matmul in a fused op")
def no_unfusable_ops(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "We don't support fusing splice, embedding op, depthwise and sparse matmul."
    A sparse matmul is a matmul with sparse attributes (``identity``, ``num_sparse_tiles``...)."""
    for s, _, sub in ctx.steps():
        if sub.type in UNFUSABLE:
            yield ctx.finding(f"{sub.type} cannot be fused", s, sub)
        elif sub.is_matmul and any(sub.attributes.get(a) for a in SPARSE_MATMUL_ATTRIBUTES):
            yield ctx.finding("sparse matmul cannot be fused", s, sub)


def _not_32x32(tile_dim: tuple[int, int] | None) -> bool:
    return tile_dim is not None and tuple(tile_dim) != (32, 32)


@fused_rule("unsupported.2", "32x32 tiles only")
def full_tiles_only(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Small tile feature is not supported (fused ops assume 32x32 tile size)."
    Checked on the graph op's ``tile_dim``, the ``tile_dim`` of what feeds its inputs, and
    any sub-op ``tile_dim``."""
    for s, _, sub in ctx.steps():
        value = sub.spec.get("tile_dim")
        if value is not None and list(value) != [32, 32]:
            yield ctx.finding(f"sub-op tile_dim {value}; fused ops use 32x32 tiles", s, sub)
    if ctx.op is None:
        return
    if _not_32x32(ctx.op.tile_dim):
        yield ctx.finding(
            f"graph op tile_dim {list(ctx.op.tile_dim or ())}; fused ops use 32x32 tiles",
            instance=True,
        )
    for index, name in enumerate(ctx.op.inputs):
        producer = ctx.netlist.producer(name)
        if producer is not None and _not_32x32(producer.tile_dim):
            yield ctx.finding(
                f"input {index} ('{name}') has tile_dim {list(producer.tile_dim or ())}; "
                "fused ops use 32x32 tiles",
                instance=True,
            )


@fused_rule("unsupported.3", "no reduce-max on rc or z")
def no_reduce_max_rc_z(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Reduce-max on rc or z dimension is not supported." """
    for s, _, sub in ctx.steps():
        if sub.is_reduce and sub.reduce_type == "max" and sub.reduce_dim in ("rc", "z"):
            yield ctx.finding(f"reduce max on dim {sub.reduce_dim} is not supported", s, sub)


@fused_rule("unsupported.4", "no reblocking between sub-ops")
def no_reblocking(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Reblocking is not supported. (issue 1300)". A unary/binary sub-op reading an
    intermediate or dest with the same number of tiles (after broadcast) but split into
    ublocks differently (an output mblock or ublock dim smaller than the input's)."""
    for read in ctx.reads:
        sub, dims = read.sub_op, read.dims
        if dims is None or sub.type not in UNARY | SFPU | BINARY:
            continue
        out = sub.dims
        same_tiles = (
            dims.rows * broadcast_factor(read.tms, "r") == out.rows
            and dims.cols * broadcast_factor(read.tms, "c") == out.cols
        )
        shrinks = any(out.mblock[i] < dims.mblock[i] or out.ublock[i] < dims.ublock[i] for i in (0, 1))
        if same_tiles and shrinks:
            yield ctx.finding(
                f"input {read.index} ('{read.name}', {dims}) is reblocked to {out}",
                read.schedule,
                sub,
            )


@netlist_rule("unsupported.5", "one math fidelity for all sub-ops")
def one_math_fidelity(ctx: NetlistContext) -> Iterator[Finding]:
    """Seed: "All ops inside the fused op have the same math fidelity, it is not possible
    to set individual op math fidelity." Checked: a sub-op giving its own
    ``math_fidelity`` that differs from the graph op's, and graph ops running the same
    fused op with different ``math_fidelity``."""
    for fused in ctx.netlist.fused_ops.values():
        fidelities = {op.math_fidelity for op in ctx.netlist.instances(fused.id)}
        if len(fidelities) > 1:
            found = sorted(str(f) for f in fidelities)
            yield Finding(f"graph ops running it use math fidelities {found}", fused_op=fused.id)
        for s, _, sub in fused.sub_ops():
            own = sub.spec.get("math_fidelity", sub.attributes.get("math_fidelity"))
            if own is not None and {str(own)} != fidelities:
                yield Finding(
                    f"sets its own math_fidelity {own}; sub-ops run at the graph op's fidelity "
                    f"({', '.join(sorted(str(f) for f in fidelities)) or 'no graph op runs it'})",
                    s,
                    sub.name,
                    fused_op=fused.id,
                )


@fused_rule("unsupported.6", "intermediates cross schedules only from matmul/reduce or a [1, 1] mblock")
def intermed_within_schedule(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Intermed buffers can't be used outside of the schedule where they are
    produced, unless the producing op is matmul or reduce, or mblock dimension is [1, 1]."
    As in the backend, a buffer from an earlier schedule that does not end with a
    matmul/reduce counts as the same schedule."""
    for read in ctx.reads:
        producer, p = read.producer, read.producer_schedule
        if read.kind != "intermed" or producer is None or p is None or p == read.schedule:
            continue
        if not is_matmul_or_reduce(ctx.fused.schedules[p][-1].type):
            continue
        if is_matmul_or_reduce(producer.type) or tuple(producer.dims.mblock) == (1, 1):
            continue
        yield ctx.finding(
            f"reads {read.name} written in schedule {p} by {producer.type} "
            f"sub-op '{producer.name}' with mblock {list(producer.dims.mblock)}; "
            "only matmul/reduce outputs or [1, 1] mblocks "
            "may cross schedules",
            read.schedule,
            read.sub_op,
        )


@fused_rule("unsupported.7", "an intermediate keeps one ublock size")
def intermed_one_ublock(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Intermediate buffers cannot be reused for different size of the ublock." """
    first: dict[str, tuple[int, int]] = {}
    for s, _, sub in ctx.steps():
        if not sub.output.startswith("intermed"):
            continue
        ublock = first.setdefault(sub.output, sub.dims.ublock)
        if ublock != sub.dims.ublock:
            yield ctx.finding(
                f"writes {sub.output} with ublock {list(sub.dims.ublock)}, "
                f"earlier written with ublock {list(ublock)}",
                s,
                sub,
            )


@netlist_rule("unsupported.8", "one ublock order per fused op")
def one_ublock_order(ctx: NetlistContext) -> Iterator[Finding]:
    """Seed: "All fused operations must have the same ublock order." Read as: the graph ops
    running one fused op (which share its generated kernel) have the same ``ublock_order``,
    and no sub-op asks for another order."""
    for fused in ctx.netlist.fused_ops.values():
        orders = {op.ublock_order for op in ctx.netlist.instances(fused.id)}
        if len(orders) > 1:
            yield Finding(f"graph ops running it use ublock orders {sorted(orders)}", fused_op=fused.id)
        for s, _, sub in fused.sub_ops():
            own = sub.spec.get("ublock_order")
            if own is not None and {str(own)} != orders:
                yield Finding(
                    f"sets its own ublock_order {own}; sub-ops use the graph op's order "
                    f"({', '.join(sorted(orders)) or 'no graph op runs it'})",
                    s,
                    sub.name,
                    fused_op=fused.id,
                )


def _reduce_order_findings(ctx: FusedContext, dim: str, order: str, label: str) -> Iterator[Finding]:
    op: NetlistOp | None = ctx.op
    if op is None or op.ublock_order == order:
        return
    for read in ctx.reads:
        sub = read.sub_op
        if not (sub.is_reduce and sub.reduce_dim == dim and read.kind == "intermed"):
            continue
        if read.dims is not None and 1 in read.dims.mblock:
            continue  # one row or column of ublocks: both orders are the same
        yield ctx.finding(
            f"{label} from {read.name} needs ublock_order {order}, "
            f"graph op '{op.name}' has {op.ublock_order}",
            read.schedule,
            sub,
            True,
        )


@fused_rule("unsupported.9", "reduce over r from an intermediate needs column-major ublocks")
def reduce_r_order(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Reduce row expects input to come in column-major order, so if input comes
    from an intermediate buffer, the fused op needs to have a column-major ublock order."
    (Reduce ``dim: r``; skipped when the input mblock is one row or column of ublocks,
    where both orders coincide.)"""
    yield from _reduce_order_findings(ctx, "r", "c", "reduce over r")


@fused_rule("unsupported.10", "reduce over c from an intermediate needs row-major ublocks")
def reduce_c_order(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Reduce column expects input to come in row-major order, so if input comes
    from an intermediate buffer, the fused op needs to have a row-major ublock order."
    (Reduce ``dim: c``; same exception as unsupported.9.)"""
    yield from _reduce_order_findings(ctx, "c", "r", "reduce over c")


@fused_rule("unsupported.11", "no transpose TM")
def no_transpose(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Transpose TM is not supported." Checked on sub-op inputs and on the graph op's
    own inputs."""
    for s, _, sub in ctx.steps():
        for index, tms in sorted(sub.tms.items()):
            if any(tm.name == "transpose" for tm in tms):
                yield ctx.finding(f"transpose TM on input {index}", s, sub)
    if ctx.op is not None:
        for index, tms in sorted(ctx.op.tms.items()):
            if any(tm.name == "transpose" for tm in tms):
                yield ctx.finding(f"transpose TM on graph op input {index}", instance=True)


@fused_rule("unsupported.12", "binary SFPU ops: no internal broadcast, no dest output")
def binary_sfpu_limits(ctx: FusedContext) -> Iterator[Finding]:
    """Seed: "Binary Sfpu ops (add with Int32 inputs, maximum, quantisation,
    requantisation and dequantisation) limits: Internal fused op broadcasts are not
    supported; dest is not supported as op output." (Add with Int32 inputs is known only
    with the graph op's data formats.)"""
    for s, _, sub in ctx.steps():
        if not ctx.is_binary_sfpu(sub):
            continue
        if sub.output == "dest":
            yield ctx.finding(f"{sub.type} runs on the SFPU and cannot output to dest", s, sub)
        for index, tms in sorted(sub.tms.items()):
            if any(tm.name in ("broadcast", "tile_broadcast") for tm in tms):
                yield ctx.finding(f"{sub.type} runs on the SFPU and cannot broadcast input {index}", s, sub)
