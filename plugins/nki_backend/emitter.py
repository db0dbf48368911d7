"""The NKI backend end to end: options, lowering, fitting SBUF, rolling, rendering.

Options of ``emit(program, backend="nki", ...)``:

``roll_loops`` (default True)
    fold regular repetition into ``for`` loops; False gives straight-line code.
``dtype`` (default: as declared)
    the dtype of every kernel tensor, e.g. ``"bfloat16"``; needed for programs tiled
    with a dtype NKI lacks (float64).
``fit_memory`` (default True)
    when the SBUF peak exceeds the target, split wide loads (:mod:`.split`).
``reorder`` (default False)
    also lower the program with instructions given to the least busy engine (the
    policies of :mod:`.engines`) and in the list-scheduled statement order (two
    priorities, :mod:`.pipeline`), also with its store chains cut into column pieces
    (``COLUMN_PIECES``, :mod:`.columns`) and skewed by a row (:mod:`.skew`), and, for a
    program of several strands (row tiles, :mod:`.strands`), skewed with a mix of
    lowering recipes per strand and its instructions interleaved (:mod:`.mix`), and keep,
    of the lowerings the engine model ends at least ``REORDER_GAIN`` sooner than the
    first, the one it ends first: a faster kernel whose loops roll less (program order
    on the default engines rolls into the shortest text).

Facts of the artifact: ``lines`` and ``lines_unrolled``, ``loops``, instruction counts
of the straight-line kernel (``dma_copy``, ``nc_matmul``, ...), estimated
``peak_sbuf_bytes`` / ``peak_psum_bytes`` per partition, ``split_loads``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import product
from typing import Any

from nkigym_graph.ir.arguments import require_type
from nkigym_graph.ir.dtypes import resolve_dtype
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.schedule import ScheduleError
from nkigym_graph.ir.targets import Target
from nkigym_graph.plugin.protocols import Artifact
from nkigym_graph.scheduling.allocate import working_dtype
from nkigym_graph.scheduling.plan import KernelPlan, kernel_plan

from .builder import KernelBuilder, KernelTypes, Lowering
from .columns import split_columns
from .engines import POLICIES, RECIPE, THRIFTY, VECTOR, Recipe
from .errors import NkiEmitError
from .ir import Call, Loop, Unit, instructions
from .lower import kernel_types, lower_program, pipelined_statements
from .lowering import LOWERINGS
from .memory import live_intervals, peak
from .mix import (
    END_PIECES,
    END_STRANDS,
    START_STRANDS,
    WINDOWS,
    Mix,
    distinct,
    ending,
    patterns,
    price,
    refine,
    repeated,
)
from .names import identifier
from .pipeline import PRIORITIES
from .planned import lower_plan
from .render import KernelText, render_kernel
from .rolling import Roller
from .skew import skew_store_chains
from .split import best_split, split_loads
from .strands import strands

COLUMN_PIECES = (2, 4)
"""With ``reorder``, the emitter also lowers the program with its store chains cut into
each of these many column pieces (:mod:`.columns`) and skewed by a row (:mod:`.skew`):
fewer, wider pieces store longer HBM runs (at a higher share of the DMA rate, see
:meth:`.engines.EngineLoads.transfer`), more pieces start storing sooner."""

MAX_SPLIT_ROUNDS = 8
PLANNED_POLICIES = tuple(policy for policy in POLICIES if policy != "ahead")
"""The engine policies a planned kernel is also lowered with: ``ahead`` weighs the work
only one engine can do that is still to come, which a plan's lowering does not count
(:func:`.lower.lower_program` does), so there it chooses as ``finish`` does."""


@dataclass(frozen=True)
class EmitOptions:
    """The accepted options (see the module docstring)."""

    roll_loops: bool = True
    dtype: str | None = None
    fit_memory: bool = True
    reorder: bool = False

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> EmitOptions:
        unknown = set(options) - set(cls.__dataclass_fields__)
        if unknown:
            known = ", ".join(sorted(cls.__dataclass_fields__))
            raise NkiEmitError(f"unknown option(s) {sorted(unknown)} for the nki backend; options: {known}")
        for flag in ("roll_loops", "fit_memory", "reorder"):
            if flag in options:  # reorder="no" or roll_loops="False" would be truthy
                require_type(options[flag], bool, flag, NkiEmitError, "True or False")
        dtype = options.get("dtype")
        if dtype is not None:  # the names tile takes (aliases and numpy dtypes too)
            options = {**options, "dtype": resolve_dtype(dtype, "dtype")}
        return cls(**options)


def emit_kernel(
    program: Program, target: Target, lowerings: Mapping[str, Lowering] = LOWERINGS, **options: Any
) -> Artifact:
    """The NKI kernel of ``program`` for ``target`` as an artifact."""
    opts = EmitOptions.parse(options)
    if target.family != "neuron":
        raise NkiEmitError(f"target {target.name} is not an AWS Neuron core (family {target.family})")
    if program.fragment:
        raise NkiEmitError("a fragment (statements without def/return) cannot be emitted as a kernel")
    types = kernel_types(program, opts.dtype)
    if program.schedule is not None:
        _require_planned_dtype(program, types)
        kb, splits = _planned(program, target, types, lowerings, opts.reorder), 0
        sbuf_bytes, psum_bytes = _pool_bytes(kb, "sbuf"), _pool_bytes(kb, "psum")
    else:
        kb, splits = _fit(program, target, types, lowerings, opts.fit_memory, opts.reorder)
        intervals = live_intervals(kb.groups)
        sbuf, psum = peak(intervals, "sbuf"), peak(intervals, "psum")
        _check_capacity(kb, sbuf.bytes, target.sbuf_bytes_per_partition, "SBUF", sbuf.live)
        _check_capacity(kb, psum.bytes, target.psum_bytes_per_partition, "PSUM", psum.live)
        banks = peak(intervals, "psum", _bank_bytes(target))
        _check_capacity(kb, banks.bytes, target.psum_bytes_per_partition, "PSUM (whole banks)", banks.live)
        sbuf_bytes, psum_bytes = sbuf.bytes, psum.bytes
    returns = tuple(kb.hbm[var].name for var in program.returns)
    name = kb.names.fresh(identifier(program.name))
    kernel = KernelText(name, tuple(kb.params), returns, _note(program, target))
    unrolled = render_kernel(kernel, kb.groups)
    units: list[Unit] = list(kb.groups)
    if opts.roll_loops:
        units = Roller(kb.names).roll(units)
    text = render_kernel(kernel, units, kb.names.loop_prefix()) if opts.roll_loops else unrolled
    counts = Counter(i.fn.removeprefix("nisa.") for i in instructions(kb.groups) if isinstance(i, Call))
    facts = {
        "lines": len(text.splitlines()),
        "lines_unrolled": len(unrolled.splitlines()),
        "loops": _count_loops(units),
        "instructions": dict(sorted(counts.items())),
        "peak_sbuf_bytes": sbuf_bytes,
        "peak_psum_bytes": psum_bytes,
        "split_loads": splits,
        "kernel": kernel.name,
    }
    return Artifact(backend="nki", text=text, parsed=None, facts=facts, suffix=".py")


def _fit(
    program: Program,
    target: Target,
    types: Any,
    lowerings: Mapping[str, Lowering],
    fit: bool,
    reorder: bool = False,
) -> tuple[KernelBuilder, int]:
    """Lower ``program`` in the statement order that needs least SBUF (shared loads first
    on a tie); while SBUF overflows (and ``fit``), split the wide loads whose split
    lowers the peak most, for at most ``MAX_SPLIT_ROUNDS`` rounds."""
    capacity = target.sbuf_bytes_per_partition
    splits = 0
    for split_round in range(MAX_SPLIT_ROUNDS + 1):
        sunk = lower_program(program, target, types, lowerings)
        best, best_peak = sunk, _sbuf_peak(sunk)
        if _has_shared_loads(program, lowerings):
            hoisted = lower_program(program, target, types, lowerings, hoist_shared=True)
            hoisted_peak = _sbuf_peak(hoisted)
            if hoisted_peak <= best_peak:
                best, best_peak = hoisted, hoisted_peak
        if best_peak <= capacity or not fit or split_round == MAX_SPLIT_ROUNDS:
            break
        choice = best_split(program, sunk.groups, sunk.tiles, _sinks(program, lowerings))
        if choice is None:
            break
        plans, _estimate = choice
        program = split_loads(program, plans)
        splits += len(plans)
    if not reorder:
        return best, splits
    hoist = best is not sunk
    first = best
    best = _faster(first, partial(lower_program, program, target, types, lowerings, hoist))
    room = max(capacity, _sbuf_peak(best))
    pieced = [split_columns(program, pieces) for pieces in COLUMN_PIECES]
    # the program in list-scheduled order by each priority and engine policy
    orders = {
        priority: pipelined_statements(program, target, types, lowerings, priority) for priority in PRIORITIES
    }
    tried: list[Callable[[], KernelBuilder]] = [
        partial(
            lower_program,
            program,
            target,
            types,
            lowerings,
            engine_policy=policy,
            pipelined=True,
            order=order,
        )
        for (priority, order), policy in product(orders.items(), POLICIES)
    ]
    # its store chains cut into column pieces (list-scheduled) and skewed (in their order)
    variants = [
        *((split, True) for split in pieced),
        (skew_store_chains(program), False),
        *((skew_store_chains(split), False) for split in pieced),
    ]
    seen = {(tuple(program.statements), pipelined) for pipelined in (True, False)}
    for variant, pipelined in variants:
        key = (tuple(variant.statements), pipelined)
        if key in seen:
            continue
        seen.add(key)
        tried.extend(
            partial(lower_program, variant, target, types, lowerings, hoist, policy, pipelined)
            for policy in (*POLICIES, THRIFTY)
        )

    def fits(kb: KernelBuilder) -> bool:
        return _sbuf_peak(kb) <= room and _psum_peak(kb) <= target.psum_bytes_per_partition

    lower_mix = partial(lower_program, target=target, types=types, lowerings=lowerings)
    for lower in tried:
        other = lower()
        if fits(other):
            best = _keep_faster(best, other, first)
    mixes = _mixes(program, lower_mix)
    best_mix: tuple[KernelBuilder, Mix] | None = None
    for mix in mixes:
        other = mix()
        if fits(other):
            best = _keep_faster(best, other, first)
            if best_mix is None or other.engines.makespan < best_mix[0].engines.makespan:
                best_mix = (other, mix)
    if best_mix is not None and best is best_mix[0]:  # the best mix, kept: its first and
        # last strands' recipes revisited (not worth its time where another lowering wins)
        lowered, (mix_lower, recipes, window, choices) = best_mix
        best = _keep_faster(best, refine(mix_lower, recipes, window, fits, lowered, choices), first)
    return best, splits


def _mixes(program: Program, lower: Callable[..., KernelBuilder]) -> list[Mix]:
    """Lowerings of the skewed program with mixes of recipes per strand (:mod:`.mix`), and
    of the program with its first ``START_STRANDS`` and last ``END_STRANDS`` strands'
    store chains cut into ``END_PIECES`` column pieces (the last ones following no recipe,
    :func:`.mix.ending`); none for a program of fewer than two strands."""
    strand_of = strands(program)
    count = len(set(strand_of.values()))
    if count < 2:
        return []
    skewed = skew_store_chains(program)
    edges = {
        node for node, strand in strand_of.items() if strand < START_STRANDS or strand >= count - END_STRANDS
    }
    ended = skew_store_chains(split_columns(program, END_PIECES, edges))

    def on(variant: Program, recipes: Sequence[Recipe | None]) -> KernelBuilder:
        return lower(variant, engine_policy=RECIPE, recipes=recipes)

    prices = price(partial(on, skewed), count)
    found, choices = patterns(prices), distinct(prices)
    tried = [
        Mix(partial(on, skewed), repeated(pattern, count), window, choices)
        for pattern in found
        for window in WINDOWS
    ]
    if ended is not skewed and count > END_STRANDS:
        tried += [
            Mix(partial(on, ended), ending(pattern, count), window, choices)
            for pattern in found
            for window in WINDOWS
        ]
    return tried


def _require_planned_dtype(program: Program, types: KernelTypes) -> None:
    """A scheduled program's plan sizes and types its tiles for the program's dtype
    (``scheduling.allocate.working_dtype``): ``dtype=`` may not ask for another one."""
    planned = working_dtype(program)
    if types.working != planned:
        raise NkiEmitError(
            f"dtype={types.working!r}: the program's schedule was planned for {planned} tiles; tile the "
            f"function with dtype={types.working!r} (then schedule it) or emit it without its schedule"
        )


def _planned(
    program: Program, target: Target, types: KernelTypes, lowerings: Mapping[str, Lowering], reorder: bool
) -> KernelBuilder:
    """Lower a scheduled program from its kernel plan (:mod:`.planned`)."""
    try:
        plan = kernel_plan(program)
    except ScheduleError as err:
        raise NkiEmitError(f"the program's schedule cannot run: {err}") from None
    return planned_kernel(plan, target, types, lowerings)


def planned_kernel(
    plan: KernelPlan, target: Target, types: KernelTypes, lowerings: Mapping[str, Lowering]
) -> KernelBuilder:
    """The kernel the backend emits for ``plan``: lowered on the default engines and under
    each engine policy, the one the engine model ends first (:func:`_faster`). The trn2
    cost model times this same kernel (:mod:`.timing`)."""
    first = lower_plan(plan, target, types, lowerings)
    if not _policies_may_win(first):
        return first
    return _faster(first, partial(lower_plan, plan, target, types, lowerings), PLANNED_POLICIES)


def _policies_may_win(first: KernelBuilder) -> bool:
    """Whether a lowering of the same plan under an engine policy could end clearly sooner
    (``REORDER_GAIN``) than ``first``, on the default engines. A planned kernel's policies
    move only the instructions several engines can run, which run on the Vector Engine in
    ``first``: the Tensor, Scalar and GpSimd Engines' work there and the DMA rings' are in
    every policy's kernel too, and no kernel ends before its busiest queue's work."""
    loads = first.engines
    floor = max(*(ns for engine, ns in loads.busy.items() if engine != VECTOR), *loads.rings.values())
    return floor < (1 - REORDER_GAIN) * loads.makespan


def _faster(
    first: KernelBuilder, lower: Callable[[str], KernelBuilder], policies: Sequence[str] = POLICIES
) -> KernelBuilder:
    """``first`` (lowered on the default engines) or, when the engine model
    (:mod:`.engines`) ends it clearly first, the fastest kernel of those each engine
    policy of ``policies`` lowers."""
    best = first
    for policy in policies:
        best = _keep_faster(best, lower(policy), first)
    return best


def _keep_faster(best: KernelBuilder, other: KernelBuilder, first: KernelBuilder) -> KernelBuilder:
    """``other`` if the engine model ends it clearly sooner than ``first`` (the default
    lowering) and sooner than ``best``; else ``best``."""
    if _clearly_faster(other, first) and other.engines.makespan < best.engines.makespan:
        return other
    return best


def _pool_bytes(kb: KernelBuilder, buffer: str) -> int:
    pools = {id(pool): pool for pool, _ in kb.slots.values() if pool.buffer == buffer}
    return sum(pool.count * pool.bytes_per_partition for pool in pools.values())


REORDER_GAIN = 0.03
"""How much sooner (a fraction) the engine model must end a kernel lowered in another
statement order or engine policy for the emitter to prefer it to the first lowering,
whose regular order rolls into the shortest loops."""


def _clearly_faster(candidate: KernelBuilder, current: KernelBuilder) -> bool:
    return candidate.engines.makespan < (1 - REORDER_GAIN) * current.engines.makespan


def _psum_peak(kb: KernelBuilder) -> int:
    """PSUM in use at the peak, each tile rounded up to whole banks."""
    return peak(live_intervals(kb.groups), "psum", _bank_bytes(kb.target)).bytes


def _bank_bytes(target: Target) -> int:
    return int(target.facts.get("psum_bank_bytes", 2048))


def _sinks(program: Program, lowerings: Mapping[str, Lowering]) -> Callable[[int], bool]:
    """Whether statement ``node`` of ``program`` is a load (it sinks to its readers)."""
    return lambda node: bool(lowerings[program[node].op.name].sinks)


def _has_shared_loads(program: Program, lowerings: Mapping[str, Lowering]) -> bool:
    return any(
        len(program.successors(node)) > 1 and lowerings[program[node].op.name].sinks
        for node in program.ids
        if program[node].op.name in lowerings
    )


def _sbuf_peak(kb: KernelBuilder) -> int:
    return peak(live_intervals(kb.groups), "sbuf").bytes


def _check_capacity(kb: KernelBuilder, used: int, capacity: int, label: str, live: tuple[Any, ...]) -> None:
    if used <= capacity:
        return
    largest = sorted(live, key=lambda iv: -iv.tile.bytes_per_partition)[:4]
    names = ", ".join(
        f"{iv.tile.name} {list(iv.tile.shape)} ({iv.tile.bytes_per_partition} B)" for iv in largest
    )
    raise NkiEmitError(
        f"{label} use peaks at {used} bytes per partition > {capacity} on {kb.target.name}: "
        f"{len(live)} tiles live at once, largest {names}; split the program's wide loads or "
        "reorder its statements"
    )


def _count_loops(units: list[Unit]) -> int:
    total = 0
    for unit in units:
        if isinstance(unit, Loop):
            total += 1 + _count_loops(list(unit.body))
    return total


def _note(program: Program, target: Target) -> str:
    return (
        f"NKI kernel for program {program.name!r} ({len(program)} statements, "
        f"hash {program.canonical_hash[:12]}), target {target.name}"
    )
