"""``trn2``: an analytic cost model of one Trainium2 NeuronCore-v3 (numbers from
``/work/shared/REFERENCE.md`` via ``TRN2.facts``). Modeled, not measured.

Per statement (the tables below, keyed by op name or engine):

- **DMA** (``load``, ``store``), priced as the NKI backend emits them (``nisa.dma_copy``,
  hardware DGE) and as the profile times them (``nki_sim.timing``, whose constants
  table it shares): the core's 16 DMA queues move a transfer's partition rows in
  parallel (a queue's rows one after another, each at 23 B/ns plus a per-row descriptor
  overhead, the size cliff), one transfer at a time; the fixed ~0.6 us of a transfer is
  latency after its inputs are ready (a task of no engine inserted before it), not
  queue occupancy, so transfers in flight overlap their fixed costs.
- **Tensor Engine** (``nc_matmul``): a fixed issue cost (the part of LoadStationary
  not hidden) plus MultiplyMoving (max(N, 64) cycles) at 2.4 GHz, the moving columns 4x
  slower for fp32 inputs; ``nc_transpose`` is a matmul against an identity (2x slower
  for fp32 in transpose mode).
- **Vector / Scalar Engines**: ~N cycles per input operand (N = elements per
  partition; a ``[P, 1]`` operand is held, not streamed) plus ~100 (Vector) or ~200
  (Scalar, the timing constants' ``scalar_fixed_cycles``) fixed cycles, at 0.96 / 1.2 GHz.
- **Engine hand-overs**: a statement on a compute engine that depends on a statement
  of another compute engine starts ``engine_sync_ns`` (0.5 us) after it ends (the
  semaphore hand-over the profile times; a task of no engine inserted before it).
- A PSUM tile read by the DMA or the Tensor Engine is first evicted to SBUF by a
  Vector Engine copy (one per read), after a hand-over, and the reader sees the copy
  after another (a compute engine; a DMA transfer's latency starts after the copy).
- Tile dtypes are the kernel's (``pricing.kernel_dtype``): a matmul result fp32 in PSUM,
  a loaded or transposed tile its input's, any other computed tile the program's output
  dtype (a ``[P, 1]`` statistic fp32), so a bf16 MLP's second matmul, whose stationary
  operand is the activation of the first's result, streams at the bf16 rate.

A scheduled program (``program.with_schedule``) is priced by the kernel the NKI backend
emits for its kernel plan, engine choices included, timed on the profile's engine model
without running it (``nki_backend.timing.planned_profile``): its modeled figure is that
kernel's profile. What follows is how an unscheduled program is priced.

Engines overlap: statements are list-scheduled in program order onto per-engine
queues, respecting the DAG (``nkigym_graph.cost.schedule``); the modeled time is the
critical path. Feasibility: the peak live SBUF and PSUM bytes per partition over the
statement order (a tile lives from its definition to its last use; matmul and
transpose results live in PSUM) must fit the target's capacities.

Search prices thousands of programs that share most statements: a statement's price is
kept by node key (``PriceTable``), so a new state prices only its new statements, and
the rest of an estimate is a few passes over columns (rows gathered with numpy, one
scheduling loop, one liveness sweep).

Most of those programs are derived from one just priced (``Program.derivation``); the
model keeps each estimated program's run (prices, tile lifetimes, evictions and the
schedule's laid-out tasks) while the program lives, and estimates a child from its
parent's: the statements the derivation did not mark dirty keep their prices,
evictions and tasks (the run's price rows and tile lifetimes are per position, and a
derived run drops the removed statements' entries with numpy); only the touched
tiles' lifetimes are recomputed, and the child's task layout is the parent's with
the rewritten tasks' columns overwritten (``tasks``: no per-state layout pass). The
schedule is solved with array operations (``nkigym_graph.cost.critical_path``) from
the parent's critical predecessors: each queue's runs of back-to-back tasks are
running sums, checked against the list scheduler's rule for every task at once. Each
finish time is the same single float addition the list scheduler makes, so the report
is that of a full estimate, bit for bit.

The package: ``pricing`` (a statement's price), ``price_table`` (prices by node key),
``lifetimes`` (tile lifetimes and PSUM evictions), ``tasks`` (the schedule's tasks laid
out as the solver takes them, patched per derivation), ``runs`` (the snapshot caches)
and ``model`` (``Trn2CostModel``).
"""

from __future__ import annotations

from nkigym_graph import hookimpl

from .model import Trn2CostModel

__all__ = ["Trn2CostModel", "nkigym_graph_register_cost_models"]


@hookimpl
def nkigym_graph_register_cost_models() -> list[type[Trn2CostModel]]:
    return [Trn2CostModel]
