"""Folding: grouping a program's statements so a large picture stays readable.

``fold`` chooses the groups:

- ``"tile"``: by output tile. A statement belongs to the output blocks it contributes
  to (the output regions written by the stores its data flows into); statements
  feeding exactly the same blocks form one group, so in a tiled matmul each output
  tile's loads, matmuls and store are one group, and a load shared by a row of tiles
  joins the other loads shared by that row. Statements feeding no output (an
  allocation, dead code) form one group.
- ``"op"``: by op name.
- a function ``statement -> key``: by its result; ``None`` leaves a statement unfolded.
- ``"none"`` or ``None``: no groups.
- ``"auto"`` (the default): ``"tile"`` above ``AUTO_FOLD_ABOVE`` statements, or when more
  than ``AUTO_FOLD_WIDER_THAN`` statements sit at one depth of the DAG (a tiled 512^3
  matmul's 128 loads side by side: a picture too wide to read), else none; beyond
  ``AUTO_MAX_GROUPS`` output tiles, tiles merge into the regions of an 8 x 8 grid over
  each output, so even a 4096^3 matmul's 1,024 tiles draw as 64 groups.

Computing the blocks is one backward pass over the data edges.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple

from nkigym_graph.errors import NkigymError
from nkigym_graph.foreign_errors import describe as describe_error
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.slices import Slices, format_slices
from nkigym_graph.ir.statement import Statement
from nkigym_graph.ir.variables import OUTPUT

Fold = str | Callable[[Statement], Hashable] | None
"""A ``fold`` argument: one of ``FOLDS``, a function ``statement -> group key``, or None."""
FOLDS = ("auto", "tile", "op", "none")
AUTO_FOLD_ABOVE = 300
"""``fold="auto"`` folds programs with more statements than this by output tile."""
AUTO_FOLD_WIDER_THAN = 32
"""``fold="auto"`` folds programs with more statements than this at one depth by output tile."""

AUTO_MAX_GROUPS = 64
"""``fold="auto"``: more output tiles than this merge into coarser output regions."""
REGIONS_PER_DIM = 8

Block = tuple[str, Slices]
"""An output region: ``(output variable, slices)``."""


def resolve_fold(fold: Fold, *programs: Program) -> Fold:
    """``fold`` checked, with ``"auto"`` decided for a picture of ``programs`` (a diff
    draws two)."""
    if callable(fold) or fold is None:
        return fold
    if fold not in FOLDS:
        raise NkigymError(
            f"unknown fold {fold!r}: use one of {', '.join(FOLDS)} or a function statement -> key"
        )
    if fold == "auto":
        large = any(len(p) > AUTO_FOLD_ABOVE or widest_depth(p) > AUTO_FOLD_WIDER_THAN for p in programs)
        return "tile" if large else None
    return None if fold == "none" else fold


def widest_depth(program: Program) -> int:
    """The most statements at one depth of the data DAG (a statement's depth: the
    longest chain of data edges reaching it), about the most boxes side by side."""
    data_in, _ = program.incoming
    depth: dict[int, int] = {}
    for node in program.ids:
        depth[node] = max((depth[src] + 1 for src, _ in data_in[node]), default=0)
    return max(Counter(depth.values()).values(), default=0)


class Grouping(NamedTuple):
    """Each statement's group key (None: no folding), how the picture is folded and what
    a group of several output blocks counts them as (``tiles``, or ``regions`` of the grid)."""

    keys: list[Hashable | None] | None
    description: str
    unit: str = "tiles"


def group_keys(program: Program, fold: Fold, *, coarsen: bool = False) -> Grouping:
    """Each statement's group key under a resolved ``fold``. With ``coarsen``, more than
    ``AUTO_MAX_GROUPS`` output tiles merge into regions (at most ``REGIONS_PER_DIM`` per
    dimension of each output)."""
    if fold is None:
        return Grouping(None, "")
    if fold == "tile":
        blocks = output_blocks(program)
        if coarsen and len({block for found in blocks for block in found}) > AUTO_MAX_GROUPS:
            grid = f"an {REGIONS_PER_DIM} x {REGIONS_PER_DIM} grid over each output"
            return Grouping(list(coarse_blocks(program, blocks)), f"by output region ({grid})", "regions")
        return Grouping(list(blocks), "by output tile")
    if fold == "op":
        return Grouping([stmt.op.name for stmt in program.statements], "by op")
    if callable(fold):
        return Grouping([_user_key(fold, program, node) for node in program.ids], "by a function")
    raise NkigymError(f"unknown fold {fold!r}")


def _user_key(fold: Callable[[Statement], Hashable], program: Program, node: int) -> Hashable:
    try:
        key = fold(program[node])
    except NkigymError:
        raise
    except Exception as err:  # the user's function failed: name it and the statement
        raise NkigymError(
            f"fold function {getattr(fold, '__name__', fold)!r} failed on statement "
            f"{program.describe(node)!r}: {describe_error(err)}"
        ) from err
    try:
        hash(key)
    except TypeError:
        raise NkigymError(
            f"fold function returned an unhashable {type(key).__name__} for statement "
            f"{program.describe(node)!r}: a group key must be hashable (a str, a tuple, ...)"
        ) from None
    return key


def output_blocks(program: Program) -> list[tuple[Block, ...]]:
    """Per statement (in program order), the output regions its data flows into (sorted)."""
    data_in, _ = program.incoming
    variables = program.variables
    blocks: dict[int, set[Block]] = {node: set() for node in program.ids}
    for node, stmt in zip(reversed(program.ids), reversed(program.statements), strict=True):
        if stmt.op.read_positions:  # an allocation contributes to nothing
            for operand in stmt.writes:
                info = variables.get(operand.var)
                if info is not None and info.kind == OUTPUT:
                    blocks[node].add((operand.var, operand.slices))
        for src, _ in data_in[node]:
            blocks[src] |= blocks[node]
    return [tuple(sorted(blocks[node])) for node in program.ids]


def coarse_blocks(program: Program, blocks: Sequence[tuple[Block, ...]]) -> list[tuple[Block, ...]]:
    """Each block replaced by the region of a fixed grid over its output that covers it."""
    region: dict[Block, Block] = {}
    for block in dict.fromkeys(b for found in blocks for b in found):
        var, slices = block
        shape = program.variables[var].shape
        cells = [-(-n // REGIONS_PER_DIM) for n in shape]
        region[block] = (
            var,
            tuple(
                (lo // c * c, min(-(-hi // c) * c, n))
                for (lo, hi), c, n in zip(slices, cells, shape, strict=True)
            ),
        )
    return [tuple(sorted({region[b] for b in found})) for found in blocks]


def group_label(key: Hashable, fold: Fold, unit: str = "tiles") -> str:
    """A readable name for a group (``unit``: what an output block of a tile fold is)."""
    if fold == "tile":
        return tile_label(key, unit)  # type: ignore[arg-type]
    if fold == "op":
        return f"op {key}"
    return str(key)


def tile_label(blocks: Sequence[Block], unit: str = "tiles") -> str:
    """``output[0:128, 0:128]``; ``8 tiles of output[0:128, 0:1024]`` (their bounding box;
    ``8 regions of ...`` when the blocks are regions of the grid)."""
    if not blocks:
        return "feeds no output"
    parts = []
    for var in dict.fromkeys(var for var, _ in blocks):
        mine = [slices for v, slices in blocks if v == var]
        if len(mine) == 1:
            parts.append(f"{var}[{format_slices(mine[0])}]")
            continue
        box = tuple((min(s[d][0] for s in mine), max(s[d][1] for s in mine)) for d in range(len(mine[0])))
        parts.append(f"{len(mine)} {unit} of {var}[{format_slices(box)}]")
    return " + ".join(parts)


def op_mix(ops: Sequence[str]) -> str:
    """``64 x nc_matmul, 16 x load``: most frequent first, then by name."""
    counts: dict[str, int] = {}
    for op in ops:
        counts[op] = counts.get(op, 0) + 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{count} x {op}" for op, count in ordered)
