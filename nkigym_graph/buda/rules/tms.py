"""TM names: the backend's parser knows a fixed set and refuses any other."""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.context import Finding, NetlistContext
from nkigym_graph.buda.rules.registry import netlist_rule
from nkigym_graph.buda.tms import KNOWN_TMS, Tm

_KNOWN = ", ".join(sorted(KNOWN_TMS))


def _unknown(tms: tuple[Tm, ...]) -> list[str]:
    return [tm.name for tm in tms if tm.name not in KNOWN_TMS]


@netlist_rule("tms.unknown", "TMs are ones the backend knows (broadcast, transpose, hslice, ...)")
def known_tms(ctx: NetlistContext) -> Iterator[Finding]:
    """Backend parser (``parse_tm_info``): a TM other than ``broadcast``, ``tile_broadcast``,
    ``transpose``, ``hslice``, ``hstack``, ``vslice``, ``vstack`` and ``pad`` is an error
    ("Unsupported TM op"), on a graph op's ``input_<i>_tms``, a queue's ``input_tms`` or a
    fused sub-op's ``input_<i>_tms``."""
    netlist = ctx.netlist
    for op in netlist.all_ops():
        for index, tms in sorted(op.tms.items()):
            for name in _unknown(tms):
                yield Finding(
                    f"op '{op.name}' input {index} ('{op.inputs[index]}'): unknown TM '{name}'; "
                    f"known TMs: {_KNOWN}",
                    graph_op=op.name,
                )
    for queue in netlist.queues.values():
        for name in _unknown(queue.input_tms):
            yield Finding(f"queue '{queue.name}' input_tms: unknown TM '{name}'; known TMs: {_KNOWN}")
    for fused in netlist.fused_ops.values():
        for s, _, sub in fused.sub_ops():
            for index, tms in sorted(sub.tms.items()):
                for name in _unknown(tms):
                    yield Finding(
                        f"input {index} ('{sub.inputs[index]}'): unknown TM '{name}'; known TMs: {_KNOWN}",
                        s,
                        sub.name,
                        fused_op=fused.id,
                    )
