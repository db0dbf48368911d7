"""``tenstorrent``: the cost model of Grayskull, Wormhole B0 and Blackhole programs.

A program is priced as the Buda backend emits it: the backend lifts it to tensor ops,
fuses, blocks (the program's tile bounds each result's ublock) and places them, checks
the netlist with every rule (strict), and the timing model
(:mod:`nkigym_graph.buda.timing`; its constants: ``print(nkigym_graph.buda.timing.table())``)
times that netlist. A program the backend cannot emit is infeasible, with the backend's
reason. Reports are kept by the program's canonical hash, so a search prices each distinct
program once; and priced netlists by what the netlist depends on (the lifted nodes, names
and architecture: ``Emitter.key``), so of the programs a search derives from one another,
which mostly lower to the same netlist, each is lifted but the netlist is planned, placed,
checked and timed once.

Modeled, not measured.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from nkigym_graph.buda import load_netlist
from nkigym_graph.buda.timing import NetlistPrice, arch_constants, price_netlist
from nkigym_graph.cost import CostModelError, CostReport
from nkigym_graph.errors import NkigymError
from nkigym_graph.ir.program import Program
from nkigym_graph_plugins.buda_backend.arch import get_arch
from nkigym_graph_plugins.buda_backend.emit import Emitter

CACHE_SIZE = 512
"""Reports kept (by canonical hash and target), and priced netlists (by ``Emitter.key``)."""
INFEASIBLE_SECONDS = 1.0
"""Modeled time of a program the backend cannot emit (it ranks after every feasible one)."""
MEMORIES = ("L1", "")
"""The report's memory: each core's L1 (the model does not track dest use)."""


class TenstorrentCostModel:
    """Prices Tenstorrent programs as the Buda backend emits them (see the module docstring).

    ``df`` prices the netlist emitted with that data format (``emit_artifact(...,
    df="Bfp8_b")``); the registered instance prices the default emission."""

    name = "tenstorrent"
    families = ("tenstorrent",)

    def __init__(self, df: str | None = None) -> None:
        self.df = df
        self._reports: OrderedDict[tuple[str, str], CostReport] = OrderedDict()
        self._netlists: OrderedDict[tuple[object, ...], NetlistPrice | NkigymError] = OrderedDict()
        self._lock = threading.Lock()

    def estimate(self, program: Program) -> CostReport:
        target = program.target
        if target.family != "tenstorrent":
            raise CostModelError(
                f"the tenstorrent cost model prices Grayskull, Wormhole B0 and Blackhole programs; "
                f"{program.name!r} is tiled for {target.name}, which the trn2 cost model prices"
            )
        key = (program.canonical_hash, target.name)
        found = self._kept(self._reports, key)
        if found is not None:
            return found
        report = self._estimate(program)
        self._keep(self._reports, key, report)
        return report

    def __reduce__(self) -> tuple[Any, ...]:
        return (TenstorrentCostModel, (self.df,))  # sent to worker processes without its cache

    def __repr__(self) -> str:
        return f"<cost model tenstorrent{'' if self.df is None else f' df={self.df}'}>"

    def price(self, program: Program) -> NetlistPrice:
        """The priced netlist of ``program`` (per op; raises the backend's error)."""
        dtypes = {param.dtype for param in program.params}
        arch = get_arch(program.target, dtypes.pop() if len(dtypes) == 1 else None, self.df)
        emitter = Emitter(program, arch)
        found = self._kept(self._netlists, emitter.key)
        if found is None:
            try:
                assembled, _, _ = emitter.document()
                found = price_netlist(load_netlist(assembled.doc), program.target)
            except NkigymError as err:
                found = err
            self._keep(self._netlists, emitter.key, found)
        if isinstance(found, NkigymError):
            raise found.with_traceback(None)
        return found

    def _kept(self, cache: OrderedDict[Any, Any], key: Any) -> Any:
        with self._lock:
            found = cache.get(key)
            if found is not None:
                cache.move_to_end(key)
            return found

    def _keep(self, cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
        with self._lock:
            cache[key] = value
            while len(cache) > CACHE_SIZE:
                cache.popitem(last=False)

    def _estimate(self, program: Program) -> CostReport:
        target = program.target
        constants = arch_constants(target.name)
        try:
            priced = self.price(program)
        except NkigymError as err:
            capacity = int(constants.l1_bytes.value - constants.l1_reserved_bytes.value)
            reason = f"the buda backend cannot emit it: {str(err).splitlines()[0]}"
            return CostReport(
                self.name, target.name, INFEASIBLE_SECONDS, {}, 0, 0, 1.0, 1.0, len(program), 0, 0,
                capacity, 0, feasible=False, reason=reason, memories=MEMORIES, memory_per="core",
            )  # fmt: skip
        clock = constants.clock_hz.value
        engines = {
            "unpack": max((p.engines.unpack for p in priced.ops), default=0.0) / clock,
            "math": max((p.engines.math for p in priced.ops), default=0.0) / clock,
            "pack": max((p.engines.pack for p in priced.ops), default=0.0) / clock,
            "noc": max((p.noc_cycles for p in priced.ops), default=0.0) / clock,
            "dram": priced.dram_seconds,
        }
        return CostReport(
            self.name,
            target.name,
            priced.seconds,
            engines,
            priced.dram_bytes,
            priced.flops,
            priced.peak_flops,
            priced.peak_flops / constants.dram_bytes_per_s.value,
            len(program),
            priced.peak_l1_bytes,
            0,
            priced.l1_capacity,
            priced.dest_bytes,
            feasible=priced.feasible,
            reason="; ".join(priced.reasons),
            memories=MEMORIES,
            memory_per="core",
        )
