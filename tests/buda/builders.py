"""Small netlists for the checker tests: one graph op running fused op 0.

``fused_netlist`` writes YAML text with host queues ``in0..in<n-1>`` (one tile each), the
graph op ``op0`` and an output queue ``out0`` matching the op. ``sub`` writes one sub-op.
Every default is valid, so a table entry only states what it changes.
"""

from __future__ import annotations

from collections.abc import Sequence

Pair = tuple[int, int]


def _pair(value: Pair) -> str:
    return f"[{value[0]}, {value[1]}]"


def sub(
    name: str,
    op_type: str,
    inputs: Sequence[str],
    output: str,
    mb: Pair = (1, 1),
    ub: Pair = (1, 1),
    **fields: str,
) -> str:
    """``name: {type, inputs, <fields as YAML text>, mblock: mb, ublock: ub, output}``."""
    parts = [f"type: {op_type}", f"inputs: [{', '.join(inputs)}]"]
    parts += [f"{key}: {value}" for key, value in fields.items()]
    parts += [f"mblock: {_pair(mb)}", f"ublock: {_pair(ub)}", f"output: {output}"]
    return f"{name}: {{{', '.join(parts)}}}"


def _queue(name: str, source: str, grid: Pair, t: int, mblock: Pair, ublock: Pair, df: str, dram: str) -> str:
    return (
        f"  {name}: {{type: queue, input: {source}, entries: 1, grid_size: {_pair(grid)}, t: {t}, "
        f"mblock: {_pair(mblock)}, ublock: {_pair(ublock)}, df: {df}, target_device: 0, loc: dram, "
        f"dram: {dram}}}\n"
    )


def fused_netlist(
    schedules: Sequence[Sequence[str]],
    *,
    inputs: int = 2,
    intermediates: int = 1,
    fused_inputs: int | None = None,
    arch: str = "wormhole_b0",
    grid: Pair = (1, 1),
    grid_loc: Pair = (0, 0),
    mblock: Pair = (1, 1),
    ublock: Pair = (1, 1),
    in_df: Sequence[str] | None = None,
    acc_df: str = "Float16_b",
    out_df: str = "Float16_b",
    intermed_df: str = "Float16_b",
    ublock_order: str = "r",
    fused_op_id: int = 0,
    op_inputs: Sequence[str] | None = None,
    op_extra: str = "",
    extra_ops: str = "",
    extra_queues: str = "",
    dram: dict[str, str] | None = None,
) -> str:
    """A netlist whose op ``op0`` runs a fused op with these ``schedules`` (lists of sub-op texts)."""
    dram = dram or {}
    in_df = list(in_df) if in_df is not None else ["Float16_b"] * inputs
    queues = "".join(
        _queue(
            f"in{i}",
            "HOST",
            (1, 1),
            1,
            (1, 1),
            (1, 1),
            in_df[i],
            dram.get(f"in{i}", f"[[0, {0x10000000 + i * 0x100000:#x}]]"),
        )
        for i in range(inputs)
    )
    cores = grid[0] * grid[1]
    out_dram = "[" + ", ".join(f"[1, {0x10000000 + k * 0x1000000:#x}]" for k in range(cores)) + "]"
    queues += _queue("out0", "op0", grid, 1, mblock, ublock, out_df, dram.get("out0", out_dram))
    op_inputs = list(op_inputs) if op_inputs is not None else [f"in{i}" for i in range(inputs)]
    schedule_text = ""
    for schedule in schedules:
        for position, entry in enumerate(schedule):
            schedule_text += f"      {'- - ' if position == 0 else '  - '}{entry}\n"
    return f"""\
devices:
  arch: {arch}
queues:
{queues}{extra_queues}graphs:
  graph0:
    target_device: 0
    input_count: 1
    op0:
      type: fused_op
      grid_loc: {_pair(grid_loc)}
      grid_size: {_pair(grid)}
      inputs: [{", ".join(op_inputs)}]
      in_df: [{", ".join(in_df[: len(op_inputs)])}]
      acc_df: {acc_df}
      out_df: {out_df}
      intermed_df: {intermed_df}
      ublock_order: {ublock_order}
      buf_size_mb: 2
      math_fidelity: HiFi3
      untilize_output: false
      attributes: {{fused_op_id: {fused_op_id}}}
      t: 1
      mblock: {_pair(mblock)}
      ublock: {_pair(ublock)}
{op_extra}{extra_ops}programs:
  - run:
    - loop: 1
    - execute: {{graph_name: graph0}}
    - endloop
fused_ops:
  0:
    inputs: {inputs if fused_inputs is None else fused_inputs}
    intermediates: {intermediates}
    schedules:
{schedule_text}"""


def queue(
    name: str,
    source: str,
    slot: int,
    *,
    grid: Pair = (1, 1),
    t: int = 1,
    mblock: Pair = (1, 1),
    ublock: Pair = (1, 1),
    extra: str = "",
) -> str:
    """One queue line (Float32, in DRAM): ``slot`` keeps its buffers apart from other queues'."""
    cores = grid[0] * grid[1]
    dram = ", ".join(f"[{slot % 6}, {0x10000000 + (slot * 16 + k) * 0x100000:#x}]" for k in range(cores))
    return (
        f"  {name}: {{type: queue, input: {source}, entries: 1, grid_size: {_pair(grid)}, t: {t}, "
        f"mblock: {_pair(mblock)}, ublock: {_pair(ublock)}, df: Float32, target_device: 0, loc: dram, "
        f"dram: [{dram}]{extra}}}\n"
    )


def graph_op(
    name: str,
    op_type: str,
    inputs: Sequence[str],
    *,
    grid_loc: Pair = (0, 0),
    grid: Pair = (1, 1),
    t: int = 1,
    mblock: Pair = (1, 1),
    ublock: Pair = (1, 1),
    extra: str = "",
) -> str:
    """One graph op line (Float32 data, HiFi4)."""
    in_df = ", ".join(["Float32"] * len(inputs))
    return (
        f"    {name}: {{type: {op_type}, grid_loc: {_pair(grid_loc)}, grid_size: {_pair(grid)}, "
        f"inputs: [{', '.join(inputs)}], t: {t}, mblock: {_pair(mblock)}, ublock: {_pair(ublock)}, "
        f"in_df: [{in_df}], acc_df: Float32, out_df: Float32, intermed_df: Float32, "
        f"math_fidelity: HiFi4{extra}}}\n"
    )


def graph_netlist(queues: Sequence[str], ops: Sequence[str], graph: str = "g") -> str:
    """A netlist of these queue lines and one graph of these op lines, executed once."""
    return (
        f"devices: {{arch: wormhole_b0}}\nqueues:\n{''.join(queues)}graphs:\n  {graph}:\n{''.join(ops)}"
        f"programs:\n  - run: [{{execute: {{graph_name: {graph}}}}}]\n"
    )
