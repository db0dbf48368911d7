"""A mix of recipes, one per strand, that shares the work out over the engines.

The greedy engine policies (:mod:`.engines`) choose instruction by instruction, so they
miss mixes such as a layer norm's best: some row tiles take every statistic and the
normalisation on the Scalar Engine and the ``* gamma + beta`` on the GpSimd Engine,
some fuse the normalisation into two ``scalar_tensor_tensor`` s on the Vector Engine,
some take ``bn_stats`` on the Vector Engine. Here each strand of the program (a row
tile, :mod:`.strands`) is lowered by one :class:`.engines.Recipe`:

1. price each recipe: lower the program with every strand on it and take each
   engine's busy time per strand (the engine model's, :mod:`.engines`);
2. for each period of ``PATTERNS`` strands, choose how many take each recipe so that
   the busiest engine's time is least (a small integer program, searched by branch and bound);
3. spread those counts evenly over the period (``S F B S F B``), lower the program
   with it and interleave the instruction groups (:mod:`.interleave`, each of
   ``WINDOWS``), so that each engine's queue holds work of several strands at once.

The emitter keeps the result only where the engine model ends it sooner than the
other lowerings (fill, drain and the waits between engines decide which period is
best, which the busy times alone do not show).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import product
from typing import NamedTuple

from .builder import KernelBuilder
from .engines import GPSIMD, SCALAR, VECTOR, EngineLoads, Recipe
from .interleave import interleave
from .ir import Group
from .strands import strands

PATTERNS = range(2, 9)
"""Strands in one period of the mixes tried."""
WINDOWS = (24, 40, 64)
"""The interleaving windows tried (:data:`.interleave.WINDOW`)."""
ENGINES = (VECTOR, SCALAR, GPSIMD)
DMA_ADDS = ((False, False), (True, False), (True, True))
"""``(dma_add, at_store)`` of the recipes: no DMA addition, one into the tile, one by the store."""
RECIPES = tuple(
    Recipe(moments, fused, one, two, dma_add, at_store)
    for moments, fused, one, two, (dma_add, at_store) in product(
        (False, True), (False, True), (SCALAR, VECTOR), (GPSIMD, VECTOR), DMA_ADDS
    )
    if not fused or (two == GPSIMD and not dma_add)  # a fused chain has no instruction of its own
)
"""The recipes tried: ``bn_stats`` or not, fused chains or not, the long one-input
instructions on the Scalar or Vector Engine, the two-input ones on the GpSimd or Vector
Engine, a row added by a DMA (into the tile, or by the store) or not."""
RINGS = ("load", "store")
"""The DMA rings (inbound: loads and the DMAs that add a row in place; outbound: stores,
and the rows stored before the stores that add into them), priced beside the engines."""

Prices = dict[Recipe, tuple[float, ...]]
"""Recipe -> busy time per strand on each of ``ENGINES``, then on each of ``RINGS``."""


def price(lower: Callable[[Sequence[Recipe | None]], KernelBuilder], count: int) -> Prices:
    """Each recipe's engine (and DMA ring) time per strand (of ``count``), from the
    program lowered all on it."""
    prices: Prices = {}
    for recipe in RECIPES:
        engines = lower((recipe,)).engines
        busy = [engines.busy[engine] for engine in ENGINES] + [engines.rings[ring] for ring in RINGS]
        prices[recipe] = tuple(time / count for time in busy)
    return prices


def best_counts(prices: Prices, pattern: int) -> dict[Recipe, int]:
    """How many of ``pattern`` strands take each recipe, least busiest engine time first,
    then least total time."""
    costs = {prices[recipe]: recipe for recipe in distinct(prices)}
    kept = [
        (recipe, cost)
        for cost, recipe in costs.items()
        if not any(other != cost and all(o <= c for o, c in zip(other, cost, strict=True)) for other in costs)
    ]
    return {
        recipe: n
        for n, (recipe, _) in zip(_least_counts([c for _, c in kept], pattern), kept, strict=True)
        if n
    }


def _least_counts(costs: Sequence[tuple[float, ...]], total: int) -> tuple[int, ...]:
    """The first counts (adding up to ``total``; the first cost's count ascending, then
    the next's, ...) whose loads ``(busiest, sum)`` are least. Branch and bound: a branch
    whose busiest partial load already exceeds the best found cannot win (loads only
    grow), so it and the larger counts after it are skipped; the result is the
    exhaustive search's."""
    best: list[tuple[tuple[float, float], tuple[int, ...]]] = []
    counts = [0] * len(costs)
    last = len(costs) - 1

    def visit(index: int, left: int, loads: list[float]) -> None:
        if index == last:
            counts[index] = left
            final = [load + left * c for load, c in zip(loads, costs[index], strict=True)]
            key = (max(final), sum(final))
            if not best or key < best[0][0]:
                best[:] = [(key, tuple(counts))]
            return
        for n in range(left + 1):
            partial = [load + n * c for load, c in zip(loads, costs[index], strict=True)]
            if best and max(partial) > best[0][0][0]:
                break
            counts[index] = n
            visit(index + 1, left - n, partial)

    visit(0, total, [0.0] * len(costs[0]))
    return best[0][1]


def spread(counts: dict[Recipe, int]) -> list[Recipe]:
    """The recipes, each as often as counted, spread evenly over one period."""
    slots = [((k + 0.5) / n, i, recipe) for i, (recipe, n) in enumerate(counts.items()) for k in range(n)]
    return [recipe for _, _, recipe in sorted(slots, key=lambda slot: slot[:2])]


def patterns(prices: Prices) -> list[tuple[Recipe, ...]]:
    """The best mix of ``prices`` for each period of ``PATTERNS``, spread (distinct ones)."""
    found: dict[tuple[Recipe, ...], None] = {}
    for period in PATTERNS:
        found.setdefault(tuple(spread(best_counts(prices, period))))
    return list(found)


END_STRANDS = 5
"""Strands at the end of the program that the emitter also lowers in column pieces."""
END_PIECES = 2
"""Column pieces of the last strands' store chains (:mod:`.columns`): the engines share
the last rows' work and the last stores start piece by piece, so that the kernel does
not end with one engine finishing a whole row while the others wait."""
START_STRANDS = 1
"""Strands at the start of the program whose store chains are cut into ``END_PIECES``
column pieces too: the first row's epilogue starts on the first columns of a spread row
(``gamma``) while the Tensor Engine still spreads the others, so the engine that takes it
waits less at the start."""


def repeated(pattern: Sequence[Recipe], count: int) -> tuple[Recipe | None, ...]:
    """``pattern`` repeated over ``count`` strands."""
    return tuple(pattern[i % len(pattern)] for i in range(count))


def ending(pattern: Sequence[Recipe], count: int) -> tuple[Recipe | None, ...]:
    """``pattern`` repeated over ``count`` strands, except that the last ``END_STRANDS``
    follow no recipe: each of their instructions goes where it finishes first."""
    return repeated(pattern, count - END_STRANDS) + (None,) * min(END_STRANDS, count)


def mixed(
    lower: Callable[[Sequence[Recipe | None]], KernelBuilder], pattern: Sequence[Recipe | None], window: int
) -> KernelBuilder:
    """The program lowered by ``pattern`` with its groups interleaved within ``window``."""
    kb = lower(pattern)
    strand_of = strands(kb.program)

    def recipe_of(group: Group) -> Recipe | None:
        strand = None if group.node is None else strand_of.get(group.node)
        return None if strand is None else pattern[strand % len(pattern)]

    loads = EngineLoads(kb.engines.constants, kb.engines.policy)
    kb.groups, kb.engines = interleave(kb.groups, loads, window, recipe_of)
    return kb


class Mix(NamedTuple):
    """A program lowered by ``recipes`` (one per strand), its groups interleaved within
    ``window`` (:func:`mixed`); calling it lowers."""

    lower: Callable[[Sequence[Recipe | None]], KernelBuilder]
    recipes: tuple[Recipe | None, ...]
    window: int
    choices: tuple[Recipe, ...] = RECIPES
    """The recipes :func:`refine` may give a strand (one per distinct price: :func:`distinct`)."""

    def __call__(self) -> KernelBuilder:
        return mixed(self.lower, self.recipes, self.window)


REFINED_FIRST = 3
"""Strands at the start of the program whose recipes :func:`refine` revisits."""
REFINED_LAST = 9
"""Strands at the end of the program whose recipes :func:`refine` revisits."""


def distinct(prices: Prices) -> tuple[Recipe, ...]:
    """One recipe per distinct price (recipes that differ only in what the program has
    none of, such as a ``+ beta`` added by DMA in a softmax, lower alike)."""
    found: dict[tuple[float, ...], Recipe] = {}
    for recipe, cost in prices.items():
        found.setdefault(cost, recipe)
    return tuple(found.values())


def refine(
    lower: Callable[[Sequence[Recipe | None]], KernelBuilder],
    recipes: Sequence[Recipe | None],
    window: int,
    fits: Callable[[KernelBuilder], bool],
    lowered: KernelBuilder | None = None,
    choices: Sequence[Recipe] = RECIPES,
) -> KernelBuilder:
    """The program lowered by ``recipes`` (one per strand) with its groups interleaved
    within ``window`` (``lowered``, when the caller has it), after changing the recipe of
    each of the first ``REFINED_FIRST`` and last ``REFINED_LAST`` strands, one at a time,
    to the one (of ``choices``, or none) with which the engine model ends the kernel
    first: the repeating pattern is right for the steady state, but at the start some
    engines wait for the first rows, and at the end for the last rows' stores."""
    chosen = list(recipes)
    best = mixed(lower, chosen, window) if lowered is None else lowered
    count = len(chosen)
    revisited = sorted({*range(min(REFINED_FIRST, count)), *range(max(0, count - REFINED_LAST), count)})
    for strand in revisited:
        for recipe in (*choices, None):
            if recipe == chosen[strand]:
                continue
            trial = [*chosen[:strand], recipe, *chosen[strand + 1 :]]
            kb = mixed(lower, trial, window)
            if kb.engines.makespan < best.engines.makespan and fits(kb):
                best, chosen = kb, trial
    return best
