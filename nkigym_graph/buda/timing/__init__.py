"""A timing model of Buda netlists on Tenstorrent chips: per op, the unpacker, math engine
and packer of each core, the NOCs and DRAM channels, and the pipeline between ops
(:mod:`.price`), from one table of constants with their sources (:mod:`.constants`,
``print(table())``). The ``tenstorrent`` cost model prices programs with it, and the
Buda backend uses it to decide fusion and how to share the worker grid. Modeled, not
measured.
"""

from nkigym_graph.buda.timing.constants import ARCHS, ESTIMATE, FIDELITY_PHASES, arch_constants, table
from nkigym_graph.buda.timing.price import Engines, NetlistPrice, OpPrice, price_netlist

__all__ = [
    "ARCHS",
    "ESTIMATE",
    "FIDELITY_PHASES",
    "Engines",
    "NetlistPrice",
    "OpPrice",
    "arch_constants",
    "price_netlist",
    "table",
]
