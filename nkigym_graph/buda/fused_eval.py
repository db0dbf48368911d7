"""Running one fused op in numpy, schedule by schedule, sub-op by sub-op.

As in the backend's golden model, every sub-op works on whole tensors (all cores of the
graph op together): operands are ``input<i>`` (the graph op's i-th input after its TMs),
``intermed<k>`` and ``dest``; the sub-op's TMs (``broadcast``, ``tile_broadcast``) apply to
its operands; the result goes to ``intermed<k>``, ``dest`` or ``output``. ``pop`` and
``pop_last`` free intermediates after the sub-op (the whole tensor is computed at once, so
both free at the same point). dest keeps its value only while each following sub-op reads
it. Intermediates are stored in the graph op's ``intermed_df`` and dest in its ``acc_df``
(:func:`~nkigym_graph.buda.quantize.quantize`); the output is rounded by the evaluator.
Reading an empty buffer, or writing an intermediate that still holds a value, is an error,
as is a result whose shape differs from the sub-op's declared blocks.
"""

from __future__ import annotations

import numpy as np

from nkigym_graph.buda import numerics
from nkigym_graph.buda.errors import NetlistEvaluationError
from nkigym_graph.buda.model import TILE, FusedOp, NetlistOp, SubOp, operand_kind
from nkigym_graph.buda.quantize import quantize

Array = np.ndarray


def _operand(
    name: str, inputs: list[Array], intermed: dict[str, Array], dest: Array | None, where: str
) -> Array:
    kind, number = operand_kind(name)
    if kind == "input" and number < len(inputs):
        return inputs[number]
    if kind == "intermed" and name in intermed:
        return intermed[name]
    if kind == "dest" and dest is not None:
        return dest
    if kind in ("intermed", "dest"):
        raise NetlistEvaluationError(where, f"reads {name}, which holds no value")
    raise NetlistEvaluationError(where, f"operand '{name}' is not an input, intermediate or dest")


def _compute(sub: SubOp, operands: list[Array], intermed_df: str | None, max_tiles: int | None) -> Array:
    if sub.is_matmul:  # m_k > 1: the partial sum waits in the output intermediate
        numerics.require_inputs("matmul", operands, 2)
        return numerics.matmul(
            operands[0],
            operands[1],
            sub.m_k,
            sub.u_kt,
            lambda partial: quantize(partial, intermed_df),
            max_tiles,
        )
    if sub.is_reduce:
        numerics.require_inputs("reduce", operands, 1)
        return numerics.reduce(operands[0], str(sub.reduce_dim), str(sub.reduce_type))
    return numerics.elementwise(sub.type, operands, sub.attributes)


def run_fused_op(op: NetlistOp, fused: FusedOp, inputs: list[Array], max_tiles: int | None = None) -> Array:
    """The output tensor of graph op ``op`` running ``fused`` on ``inputs``; a sub-op's
    broadcast operand or matmul product of more than ``max_tiles`` tiles is refused
    before it is made."""
    if len(inputs) != fused.inputs:
        raise NetlistEvaluationError(
            f"op '{op.name}'", f"has {len(inputs)} inputs, fused op {fused.id} takes {fused.inputs}"
        )
    intermed: dict[str, Array] = {}
    dest: Array | None = None
    output: Array | None = None
    grid_r, grid_c = op.grid_size
    for s, _, sub in fused.sub_ops():
        where = f"op '{op.name}' (fused op {fused.id}), schedule {s}, sub-op '{sub.name}'"
        operands = [_operand(name, inputs, intermed, dest, where) for name in sub.inputs]
        try:
            operands = [numerics.apply_tms(x, sub.input_tms(i), max_tiles) for i, x in enumerate(operands)]
            result = _compute(sub, operands, op.intermed_df, max_tiles)
            if sub.attributes.get("relu_en"):
                result = numerics.relu(result, sub.attributes)
        except numerics.MALFORMED as exc:
            raise NetlistEvaluationError(where, str(exc)) from exc
        expected = (result.shape[0], grid_r * sub.dims.rows * TILE, grid_c * sub.dims.cols * TILE)
        if result.shape != expected:
            raise NetlistEvaluationError(
                where,
                f"result has shape {result.shape}, its blocks ({sub.dims}) "
                f"on grid {[grid_r, grid_c]} give {expected}",
            )
        if "dest" not in sub.inputs:
            dest = None
        for name in sub.popped:
            if name != sub.output:
                intermed.pop(name, None)
        if sub.output.startswith("intermed"):
            if sub.output in intermed and sub.output not in sub.popped:
                raise NetlistEvaluationError(
                    where, f"writes {sub.output}, which still holds a value (missing pop)"
                )
            intermed[sub.output] = quantize(result, op.intermed_df)
        elif sub.output == "dest":
            dest = quantize(result, op.acc_df)
        elif sub.output == "output":
            output = result
        else:
            raise NetlistEvaluationError(where, f"output '{sub.output}' is not intermed<k>, dest or output")
    if output is None:
        raise NetlistEvaluationError(f"op '{op.name}' (fused op {fused.id})", "no sub-op writes output")
    return output
