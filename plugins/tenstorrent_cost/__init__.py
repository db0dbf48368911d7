"""The ``tenstorrent`` cost model: Grayskull, Wormhole B0 and Blackhole programs priced as
the Buda backend emits them (:mod:`.model`), with the netlist timing model of
:mod:`nkigym_graph.buda.timing` (one table of constants with their sources:
``print(nkigym_graph.buda.timing.table())``). Modeled, not measured.
"""

from __future__ import annotations

from nkigym_graph import hookimpl

from .model import TenstorrentCostModel


@hookimpl
def nkigym_graph_register_cost_models() -> list[type[TenstorrentCostModel]]:
    return [TenstorrentCostModel]


__all__ = ["TenstorrentCostModel"]
