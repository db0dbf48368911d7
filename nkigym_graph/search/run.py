"""``search``: find a good rewrite sequence for a program under a cost model.

>>> from nkigym_graph.search.replay import replay
>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> from nkigym_graph_plugins.trn2_cost import Trn2CostModel
>>> root = tiled_matmul(256, 256, 256)
>>> result = search(root, strategy="greedy", cost_model=Trn2CostModel())  # or cost_model="trn2"
>>> replay(root, result.path) == result.best, len(root), len(result.best)
(True, 29, 21)
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

from nkigym_graph.cost import CostModel, get_cost_model, model_for
from nkigym_graph.errors import NkigymError, PluginError
from nkigym_graph.ir.arguments import describe, require_int, require_seconds, require_type
from nkigym_graph.ir.collector import collector_relaxed
from nkigym_graph.ir.program import Program
from nkigym_graph.numeric.blas import one_blas_thread
from nkigym_graph.numeric.equivalence import DEFAULT_MEMO_BYTES, DEFAULT_SAMPLES, VerifySettings
from nkigym_graph.plugin.transforms import get_transform
from nkigym_graph.rewriting.transform import Transform
from nkigym_graph.search.confirm import confirm_with_netlist, confirm_with_profile, require_agreement
from nkigym_graph.search.errors import SearchError
from nkigym_graph.search.executors import resolve_executor
from nkigym_graph.search.progress import Progress
from nkigym_graph.search.replay import flatten
from nkigym_graph.search.result import SearchResult, SearchStats
from nkigym_graph.search.session import Session
from nkigym_graph.search.strategies import get_strategy

DEFAULT_TRANSFORMS = ("data_reuse", "operand_merge", "reduction_merge", "scale_after_matmul", "dead_code")
VERIFY_MODES = ("sampled", "all")


def search(
    program: Program,
    transforms: Sequence[str | Transform] | None = None,
    strategy: str = "greedy",
    budget: int | None = None,
    seed: int = 0,
    cost_model: str | CostModel | None = None,
    executor: Executor | str | None = None,
    verify: str = "sampled",
    progress: bool | None = None,
    *,
    workers: int | None = None,
    seconds: float | None = None,
    samples: int = DEFAULT_SAMPLES,
    memo_bytes: int = DEFAULT_MEMO_BYTES,
    confirm: bool | None = None,
    **options: Any,
) -> SearchResult:
    """Search rewrite sequences of ``program`` for the best modeled cost.

    ``transforms``: names or instances (default: the strategy's own list; ``data_reuse``,
    ``operand_merge``, ``dead_code``, and for ``schedule`` the schedule choices too).
    ``strategy``: ``exhaustive``, ``random``, ``greedy``, ``beam`` or ``schedule`` (options
    such as ``min_depth``, ``width`` or ``batch`` go in ``options``). ``budget``: the
    most distinct states to create (for ``random``: the states to collect). ``seed``
    fixes the random choices, the verification inputs and the sample points.
    ``seconds``: a wall-clock limit; no candidate's evaluation starts after it (the one
    under way finishes; with an executor, the round under way: twice as many candidates
    as it runs at once) and the best state
    so far is returned, checked in full as always (``result.stats.stopped`` says
    ``time``; the check of the best comes after the limit). A search stopped by time
    depends on the machine's speed; one that ends first gives the same result as
    without a limit.
    ``verify``: ``"sampled"`` checks ``samples`` output elements of every new state,
    ``"all"`` every element; the best is always checked in full. ``executor``: None
    (in this process), ``"process"`` or an ``Executor``; ``workers=N`` makes a process
    pool of N. ``progress``: a status line on stderr (default: when it is a terminal).
    ``cost_model``: a name or instance; default the model of the program's target
    (``trn2`` for Trainium, ``tenstorrent`` for Grayskull, Wormhole B0 and Blackhole).
    ``confirm`` (default on): on a NeuronCore target, emit the best as an NKI kernel and
    time it with ``nki_sim.profile`` (``result.profile``, the second yardstick); on a
    Tenstorrent target, emit it as a Buda netlist, check it strictly and evaluate it
    against the program (``result.netlist``). A fragment, which is no kernel, is not
    confirmed.
    """
    require_type(program, Program, "program", SearchError, "a Program (from tile or parse_program)")
    chosen = get_strategy(strategy)
    bound = chosen.bind(options)
    if not isinstance(verify, str) or verify not in VERIFY_MODES:
        raise SearchError(f"verify must be one of {VERIFY_MODES}, got {verify!r}")
    budget = require_int(chosen.budget if budget is None else budget, "budget", SearchError, minimum=1)
    seed = require_int(seed, "seed", SearchError)
    samples = require_int(samples, "samples", SearchError, minimum=1)
    memo_bytes = require_int(memo_bytes, "memo_bytes", SearchError)
    limit = None if seconds is None else require_seconds(seconds, "seconds", SearchError)
    for flag, value in (("progress", progress), ("confirm", confirm)):
        if value is not None:
            require_type(value, bool, flag, SearchError, "None, True or False")
    resolved = transform_list(chosen.transforms if transforms is None else transforms)
    if not resolved:
        raise SearchError("search needs at least one transform")
    names = [t.name for t in resolved]
    if len(set(names)) != len(names):
        raise SearchError(f"transforms named twice: {names}")
    model = model_for(program.target) if cost_model is None else get_cost_model(cost_model)
    started = time.perf_counter()
    pool, owned = resolve_executor(executor, workers)
    display = Progress(f"search {strategy}", progress)
    # one BLAS thread for every check of the search (set once, not per program checked)
    with collector_relaxed(), one_blas_thread():
        try:
            session = Session(
                program,
                resolved,
                model,
                full_checks=verify == "all",
                settings=VerifySettings(seed, samples, memo_bytes),
                budget=budget,
                executor=pool,
                progress=display,
                deadline=None if limit is None else started + limit,
                budget_counts=chosen.budget_counts,
            )
            chosen.run(session, **bound)
            session.verify_best()
            best = session.best
            best_program = session.program(best)
        finally:
            display.close()
            if owned and pool is not None:
                pool.shutdown()
    states = session.graph.states()
    for state in states:
        state.candidates.clear()
    stats = SearchStats(
        strategy=strategy,
        states=len(states),
        duplicates=session.duplicates,
        verified=session.verified,
        fully_verified=session.fully_verified,
        expansions=session.expansions,
        seconds=time.perf_counter() - started,
        collected=len(session.collected),
        max_depth=max(s.depth for s in states),
        stopped=_stopped(session, chosen.budget_counts),
    )
    result = SearchResult(
        best=best_program,
        path=flatten(session.graph.steps_to(best.hash)),
        cost=best.cost,
        root_cost=session.root.cost,
        stats=stats,
        graph=session.graph.graph,
        collected=tuple(session.collected),
    )
    confirm = (confirm is None or confirm) and not best_program.fragment  # a fragment is no kernel
    return _confirmed(result, seed) if confirm else result


def _confirmed(result: SearchResult, seed: int) -> SearchResult:
    """``result`` with its best program emitted and checked on its target's backend. A
    confirmation that fails is a ``SearchError`` that keeps the unconfirmed result
    (``err.result``): the search's work is not lost with it."""
    best = result.best
    family = best.target.family
    try:
        if family == "neuron":
            return dataclasses.replace(result, profile=confirm_with_profile(best, seed))
        if family == "tenstorrent":
            return dataclasses.replace(result, netlist=require_agreement(confirm_with_netlist(best, seed)))
    except SearchError as err:
        err.result = result
        raise
    except NkigymError as err:  # the backend cannot emit or run the best program
        backend = "an NKI kernel" if family == "neuron" else "a Buda netlist"
        error = SearchError(
            f"the best program ({len(best)} statements, hash {best.canonical_hash[:12]}) cannot be confirmed "
            f"as {backend} for {best.target.name}: {err}; search(..., confirm=False) returns it "
            "unconfirmed (this error's .result holds this search's result)"
        )
        error.result = result
        raise error from err
    return result


def _stopped(session: Session, budget_counts: str) -> str:
    """Why the search ended (``SearchStats.stopped``)."""
    if session.timed_out:
        return "time"
    used = len(session.collected) if budget_counts == "collected" else len(session.graph)
    return "budget" if used >= session.budget else "done"


def transform_list(transforms: Sequence[str | Transform]) -> list[Transform]:
    """``transforms`` (names or instances) resolved; anything else is a ``SearchError``."""
    if isinstance(transforms, str | bytes) or not isinstance(transforms, Sequence):
        unordered = " (a set has no order; the transforms' order is the candidates' order)"
        raise SearchError(
            f"transforms must be a list of transform names or Transform instances "
            f"(default: {', '.join(DEFAULT_TRANSFORMS)}), got {describe(transforms)}"
            f"{unordered if isinstance(transforms, set | frozenset) else ''}"
        )
    resolved = []
    for item in transforms:
        if not isinstance(item, str | Transform):
            raise SearchError(
                f"transforms entries must be names or Transform instances, got {describe(item)}"
            )
        try:
            resolved.append(get_transform(item))
        except PluginError as err:
            raise SearchError(f"transforms: {err}") from None
    return resolved
