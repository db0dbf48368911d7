"""A numpy evaluator of Buda netlists: the golden answer a device run must match.

Tensors are whole queues: shape ``(t, grid_r * mblock_m * ublock_rt * 32,
grid_c * mblock_n * ublock_ct * 32)``, or 2-D ``(rows, cols)`` when ``t == 1`` (inputs may be
given either way; outputs with ``t == 1`` are returned 2-D). Values are computed in float64
and returned as float32, and rounded to each data format where the netlist stores them:
a queue's ``df`` (the host's input, an op's output), an op's ``out_df``, a fused op's
``intermed_df`` (intermediates) and ``acc_df`` (dest) -- float formats by rounding, Bfp
formats as block floating point with one exponent per 16 values
(:mod:`nkigym_graph.buda.quantize`).

Semantics:

- the programs decide which graphs run, in order (see :mod:`nkigym_graph.buda.program`);
  one ``execute`` consumes the current contents of the queues it reads and replaces the
  contents of the queues its ops write (a graph op with ``gradient_op: true`` adds to the
  queue instead, starting from the value given in ``inputs`` or zero);
- inside a graph, ops run in dependency order; each input gets the op's
  ``input_<i>_tms`` (``broadcast``, ``transpose``, ``hslice``/``hstack``/``vslice``/``vstack``),
  and a queue's ``input_tms`` apply to what it stores;
- ``matmul`` contracts the full inner dim (``m_k * u_kt`` tiles: the m_k partial products
  accumulate, the running sum stored in ``intermed_df`` between steps), adds a ``bias:
  true`` third input (row 0 of each tile broadcast), and sums over ``t`` with
  ``accumulate: true``; ``reduce`` over ``r``/``c``/``z`` with ``max`` or ``sum``;
  elementwise ops as in :mod:`nkigym_graph.buda.numerics`; ``relu_en`` on any op;
- fused ops run schedule by schedule (:mod:`nkigym_graph.buda.fused_eval`).

Not modelled: queue ``entries`` and a graph's ``input_count`` (each ``execute`` processes one
entry), queue-pointer settings, math fidelity, the precision of the FPU's source registers
and of dest while a matmul accumulates within one ``m_k`` step, integer formats, and ops
without a numpy meaning here (``dropout``, quantization ops, splice, embedding, depthwise, sparse matmul).
Anything it cannot evaluate raises :class:`NetlistEvaluationError` naming the op.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from nkigym_graph.buda import numerics
from nkigym_graph.buda.errors import NetlistEvaluationError
from nkigym_graph.buda.fused_eval import run_fused_op
from nkigym_graph.buda.limits import DEFAULT_LIMITS, NetlistLimits, check_evaluation_limits
from nkigym_graph.buda.model import NetlistOp, Queue
from nkigym_graph.buda.netlist import Netlist, NetlistSource, load_netlist
from nkigym_graph.buda.program import graph_runs
from nkigym_graph.buda.quantize import quantize
from nkigym_graph.ir.arguments import describe

Array = np.ndarray


def _as_queue_tensor(queue: Queue, value: object) -> Array:
    where = f"input '{queue.name}'"
    try:
        array = np.asarray(value)
        if array.dtype.kind != "c":
            array = array.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise NetlistEvaluationError(where, f"is not a numeric array: {exc}") from None
    if array.dtype.kind == "c":  # a cast would drop the imaginary parts, with only a warning
        raise NetlistEvaluationError(where, f"is complex ({array.dtype}); queues hold real numbers")
    given = array.shape
    if array.ndim == 2 and queue.t == 1:
        array = array[np.newaxis]
    if array.shape != queue.shape:
        expected = queue.shape[1:] if queue.t == 1 else queue.shape
        raise NetlistEvaluationError(
            f"input '{queue.name}'", f"has shape {given}, the queue holds {expected}"
        )
    return array


def _initial_state(netlist: Netlist, inputs: object) -> dict[str, Array]:
    if not isinstance(inputs, Mapping):
        raise NetlistEvaluationError(
            "inputs", f"must be a map of host queue name to array, got {describe(inputs)}"
        )
    state = {}
    for name, value in inputs.items():
        queue = netlist.queues.get(name)
        if queue is None:
            raise NetlistEvaluationError(
                f"input '{name}'", f"is not a queue; queues: {sorted(netlist.queues)}"
            )
        state[name] = quantize(_as_queue_tensor(queue, value), queue.df)
    return state


def _dependency_order(ops: Mapping[str, NetlistOp], graph: str) -> list[NetlistOp]:
    order: list[NetlistOp] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(op: NetlistOp) -> None:
        if state.get(op.name) == 2:
            return
        if state.get(op.name) == 1:
            raise NetlistEvaluationError(f"graph '{graph}'", f"ops form a cycle through '{op.name}'")
        state[op.name] = 1
        for name in op.inputs:
            if name in ops:
                visit(ops[name])
        state[op.name] = 2
        order.append(op)

    for op in ops.values():
        visit(op)
    return order


def _spill(df: str | None) -> Callable[[Array], Array]:
    """What keeping a matmul's partial sum in the intermediate buffer does to it."""
    return lambda partial: quantize(partial, df)


def _compute(netlist: Netlist, op: NetlistOp, operands: list[Array], max_tiles: int) -> Array:
    attributes = op.attributes
    if op.type == "fused_op":
        fused = netlist.fused_ops.get(op.fused_op_id or "")
        if fused is None:
            raise NetlistEvaluationError(f"op '{op.name}'", f"fused op '{op.fused_op_id}' is not defined")
        return run_fused_op(op, fused, operands, max_tiles)
    if op.type == "matmul":
        bias = bool(attributes.get("bias"))
        numerics.require_inputs("matmul with bias" if bias else "matmul", operands, 3 if bias else 2)
        m_k, u_kt = attributes.get("m_k"), attributes.get("u_kt")
        out = numerics.matmul(
            operands[0],
            operands[1],
            m_k and int(m_k),
            u_kt and int(u_kt),
            _spill(op.intermed_df),
            max_tiles,
        )
        if bias:
            out = out + numerics.tile_broadcast(operands[2], "r")
        return out.sum(axis=0, keepdims=True) if attributes.get("accumulate") else out
    if op.type == "reduce":
        numerics.require_inputs("reduce", operands, 1)
        return numerics.reduce(
            operands[0],
            str(attributes.get("dim")),
            str(attributes.get("type")),
            int(attributes.get("z", 1)),
        )
    return numerics.elementwise(op.type, operands, attributes)


def _run_op(netlist: Netlist, op: NetlistOp, operands: list[Array], max_tiles: int) -> Array:
    """``op``'s output; no tensor it makes holds more than ``max_tiles`` tiles."""
    where = f"op '{op.name}'"
    try:
        operands = [numerics.apply_tms(x, op.input_tms(i), max_tiles) for i, x in enumerate(operands)]
        out = _compute(netlist, op, operands, max_tiles)
        if op.type != "fused_op" and op.attributes.get("relu_en"):
            out = numerics.relu(out, op.attributes)
    except numerics.MALFORMED as exc:
        raise NetlistEvaluationError(where, str(exc)) from exc
    out = quantize(out, op.out_df)
    if out.shape != op.shape:
        raise NetlistEvaluationError(where, f"result has shape {out.shape}, the op declares {op.shape}")
    return out


def _read(
    netlist: Netlist, op: NetlistOp, name: str, values: dict[str, Array], state: dict[str, Array]
) -> Array:
    if name in values:
        return values[name]
    if name in state:
        return state[name]
    where = f"op '{op.name}'"
    if name in netlist.queues:
        raise NetlistEvaluationError(where, f"reads queue '{name}', which holds no data (give it in inputs)")
    if netlist.op(name) is not None:
        raise NetlistEvaluationError(
            where, f"reads op '{name}' of another graph; graphs exchange data through queues"
        )
    raise NetlistEvaluationError(where, f"input '{name}' is neither a queue nor an op")


def _execute(netlist: Netlist, graph: str, state: dict[str, Array], max_tiles: int) -> None:
    ops = netlist.ops(graph)
    values: dict[str, Array] = {}
    for op in _dependency_order(ops, graph):
        operands = [_read(netlist, op, n, values, state) for n in op.inputs]
        values[op.name] = _run_op(netlist, op, operands, max_tiles)
    for queue in netlist.queues.values():
        if queue.input not in values:
            continue
        try:
            data = numerics.apply_tms(values[queue.input], queue.input_tms, max_tiles)
        except ValueError as exc:
            raise NetlistEvaluationError(f"queue '{queue.name}'", str(exc)) from exc
        if data.shape != queue.shape:
            raise NetlistEvaluationError(
                f"queue '{queue.name}'",
                f"receives shape {data.shape} from '{queue.input}' but holds {queue.shape}",
            )
        if ops[queue.input].spec.get("gradient_op"):
            data = data + state.get(queue.name, np.zeros(queue.shape))
        state[queue.name] = quantize(data, queue.df)


def evaluate_netlist(
    netlist: NetlistSource | Netlist | None = None,
    inputs: Mapping[str, object] | None = None,
    *,
    path: str | Path | None = None,
    limits: NetlistLimits = DEFAULT_LIMITS,
) -> dict[str, Array]:
    """Run a netlist in numpy and return every output queue (a queue written by an op).

    ``inputs`` maps host queue names (and, optionally, initial contents of op-written
    queues such as rams) to arrays of the queue's shape. Raises
    :class:`NetlistEvaluationError` naming the op (and fused sub-op) it cannot run, and
    :class:`NetlistError` when the netlist cannot be read. ``netlist``, ``path=`` and
    ``limits`` are as for :func:`~nkigym_graph.buda.netlist.load_netlist`; a matmul
    product or a broadcast input past ``limits.tensor_tiles`` (which the netlist's
    declared sizes do not bound) is refused, naming the op, before it is computed.
    """
    loaded = load_netlist(netlist, path=path, limits=limits)
    check_evaluation_limits(loaded, limits)
    state = _initial_state(loaded, inputs)
    for graph in graph_runs(loaded):
        _execute(loaded, graph, state, limits.tensor_tiles)
    outputs = {}
    for queue in loaded.output_queues():
        if queue.name in state:
            data = state[queue.name].astype(np.float32)
            outputs[queue.name] = data[0] if queue.t == 1 else data
    return outputs
