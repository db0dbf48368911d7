"""Seed 004 "Fusing int ops constraints" 1-9, plus the backend's "no int fused ops on Grayskull".

An integer fused op is one whose graph op accumulates in ``Int32`` (``acc_df: Int32``), the
backend's definition; every rule here needs the graph op's data formats.
"""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import INT_FORMATS, Finding, FusedContext
from nkigym_graph.buda.optypes import INT_FUSED_TYPES, QUANT, REQUANT_DEQUANT
from nkigym_graph.buda.rules.registry import fused_rule


def _int_op(ctx: FusedContext) -> bool:
    return ctx.op is not None and ctx.is_int


@fused_rule(
    "int.1",
    "int fused ops: only nop, datacopy, add, subtract, multiply, maximum, (de/re)quantization",
)
def int_op_types(ctx: FusedContext) -> Iterator[Finding]:
    """Seed int 1: "Only supported ops ATM are nop, add, subtract, multiply, quantization,
    dequantization, requantization." Also accepted: ``datacopy`` (the same op as ``nop``)
    and ``maximum``, which the backend has since added to integer fused ops."""
    if not _int_op(ctx):
        return
    for s, _, sub in ctx.steps():
        if sub.type not in INT_FUSED_TYPES:
            yield ctx.finding(f"{sub.type} is not supported in an integer fused op", s, sub, True)


@fused_rule("int.2", "no integer data in a float fused op")
def no_int_float_mix(ctx: FusedContext) -> Iterator[Finding]:
    """Seed int 2: "In fused op integer and float FPU operations can't be fused together."
    Checked: integer data formats (in_df, intermed_df, out_df) in a fused op that does not
    accumulate in Int32."""
    op = ctx.op
    if op is None or ctx.is_int:
        return
    named: dict[str, str | None] = {f"in_df[{i}]": df for i, df in enumerate(op.in_df)}
    named.update(intermed_df=op.intermed_df, out_df=op.out_df)
    ints = [f"{k}={v}" for k, v in named.items() if v in INT_FORMATS]
    if ints:
        yield ctx.finding(f"integer formats {ints} in a fused op with acc_df {op.acc_df}", instance=True)


@fused_rule("int.3", "int fused ops: dest input only for requantization/dequantization")
def int_dest_input(ctx: FusedContext) -> Iterator[Finding]:
    """Seed int 3: "Dest register is allowed as input only on requantization and
    dequantization ops." """
    if not _int_op(ctx):
        return
    for read in ctx.reads:
        if read.kind == "dest" and read.sub_op.type not in REQUANT_DEQUANT:
            yield ctx.finding(
                f"{read.sub_op.type} reads dest in an integer fused op",
                read.schedule,
                read.sub_op,
                True,
            )


@fused_rule("int.4", "int fused ops: intermed_df Int8/Int32, acc_df Int32")
def int_formats(ctx: FusedContext) -> Iterator[Finding]:
    """Seed int 4: "Intermed df has to be Int8 or Int32, accumulation df has to be Int32."
    Checked: acc_df of any fused op with a (de/re)quantization sub-op (the backend asserts
    "Quantization ops are only supported in int fused ops": an error), and intermed_df of
    an integer fused op (checked by no backend code: a warning)."""
    op = ctx.op
    if op is None:
        return
    if ctx.is_int and ctx.fused.intermediates and op.intermed_df not in INT_FORMATS:
        yield ctx.finding(
            f"intermed_df {op.intermed_df} in an integer fused op; use Int8 or Int32",
            instance=True,
            severity="warning",
        )
    quant = next(((s, sub) for s, _, sub in ctx.steps() if sub.type in QUANT), None)
    if quant and not ctx.is_int:
        yield ctx.finding(
            f"{quant[1].type} needs acc_df Int32, graph op has {op.acc_df}",
            quant[0],
            quant[1],
            True,
        )


@fused_rule("int.5", "int fused ops: inputs are Int8/Int32 except quantization inputs and scalars")
def int_inputs(ctx: FusedContext) -> Iterator[Finding]:
    """Seed int 5: "All op inputs have to be ints unless they are input to quantization or
    scalar inputs for dequantization/requantization." As in the backend, subtract and
    multiply take Int8 inputs only."""
    if not _int_op(ctx):
        return
    for read in ctx.reads:
        sub = read.sub_op
        if read.kind != "input" or sub.type in QUANT:
            continue
        allowed = ("Int8",) if sub.type in ("subtract", "multiply") else INT_FORMATS
        df = ctx.operand_df(read.name)
        if df not in allowed:
            yield ctx.finding(
                f"input {read.index} ('{read.name}') is {df}; {sub.type} needs {' or '.join(allowed)}",
                read.schedule,
                sub,
                True,
            )


@fused_rule("int.6", "int fused ops: out_df Int8/Int32, Float32 after a final dequantization")
def int_output_format(ctx: FusedContext) -> Iterator[Finding]:
    """Seed int 6: "Output df has to be Int32 or Int8 unless dequantionzation is last sub
    op, than output has to be Float32." """
    if not _int_op(ctx) or not ctx.fused.schedules or not ctx.fused.schedules[-1]:
        return
    assert ctx.op is not None
    last = ctx.fused.schedules[-1][-1]
    allowed = ("Float32",) if last.type == "dequantization" else INT_FORMATS
    if ctx.op.out_df not in allowed:
        yield ctx.finding(
            f"out_df {ctx.op.out_df} with last sub-op {last.type}; it must be {' or '.join(allowed)}",
            instance=True,
        )


@fused_rule("int.7", "int fused ops: ublock <= 2 tiles with (de/re)quantization, else <= 4")
def int_ublock(ctx: FusedContext) -> Iterator[Finding]:
    """Seed int 7: "If dequantization or requantization ops are used micro block size has
    to be <= 2 (otherwise it's <=4)." The backend asserts the 2-tile limit for a
    (de/re)quantization reading dest as input 1 (an error); the rest is documented only (a
    warning; dest's own capacity is ``limits.dest_ublock``)."""
    if not _int_op(ctx):
        return
    requant = any(sub.type in REQUANT_DEQUANT for _, _, sub in ctx.steps())
    limit = 2 if requant else 4
    for s, _, sub in ctx.steps():
        if sub.dims.ublock_tiles <= limit:
            continue
        enforced = sub.type in REQUANT_DEQUANT and len(sub.inputs) == 2 and sub.inputs[1] == "dest"
        yield ctx.finding(
            f"ublock {list(sub.dims.ublock)} has more than {limit} tiles",
            s,
            sub,
            True,
            severity=None if enforced else "warning",
        )


@fused_rule("int.8", "quantization: both operands Float32 fused op inputs")
def quantization_operands(ctx: FusedContext) -> Iterator[Finding]:
    """Seed int 8: "For quantization op both operands have come from inputs and to be of
    type Float32." """
    if ctx.op is None:
        return
    for read in ctx.reads:
        if read.sub_op.type != "quantization":
            continue
        df = ctx.operand_df(read.name)
        if read.kind != "input" or df != "Float32":
            yield ctx.finding(
                f"quantization input {read.index} is '{read.name}' ({df}); "
                "it must be a Float32 fused op input",
                read.schedule,
                read.sub_op,
                True,
            )


@fused_rule(
    "int.9", "(de/re)quantization: input0 a Float32 input with dest input1, else Int8/Int32 and Float32"
)
def requant_operands(ctx: FusedContext) -> Iterator[Finding]:
    """Seed int 9: "For dequantization or requantization one input0 has to be Float32 form
    op input and input1 has to be dest register." As the backend reads it: input 0 is
    never dest; when input 1 is dest, input 0 is a Float32 fused-op input (the seed's
    form); otherwise input 0 is Int8/Int32 and input 1 Float32 (a valid netlist of the
    backend's CI requantizes an Int8 input with Float32 scalars). Checked in integer fused
    ops (elsewhere int.4 already rejects these ops)."""
    if not _int_op(ctx):
        return
    for s, _, sub in ctx.steps():
        if sub.type not in REQUANT_DEQUANT or len(sub.inputs) != 2:
            continue
        first, second = sub.inputs
        if first == "dest":
            yield ctx.finding("input 0 is dest; it cannot be", s, sub, True)
            continue
        first_df, second_df = ctx.operand_df(first), ctx.operand_df(second)
        if second == "dest":
            if not first.startswith("input") or first_df != "Float32":
                yield ctx.finding(
                    f"input 1 is dest, so input 0 must be a Float32 fused op input, "
                    f"not '{first}' ({first_df})",
                    s,
                    sub,
                    True,
                )
            continue
        if first_df not in INT_FORMATS:
            yield ctx.finding(
                f"input 0 '{first}' is {first_df}; without dest as input 1 it must be Int8 or Int32",
                s,
                sub,
                True,
            )
        if second_df != "Float32":
            yield ctx.finding(
                f"input 1 '{second}' is {second_df}; without dest as input 1 it must be Float32", s, sub, True
            )


@fused_rule("int.arch", "no integer fused ops on Grayskull")
def int_not_on_grayskull(ctx: FusedContext) -> Iterator[Finding]:
    """Backend check: "Int fused op is not supported on grayskull"."""
    if _int_op(ctx) and ctx.target.name == "grayskull":
        yield ctx.finding("integer fused ops (acc_df Int32) are not supported on Grayskull", instance=True)
