"""The size of a tiled program, known before it is emitted, and the limit ``tile`` enforces.

Every output tile is computed by the same statements (``emit``'s loops), so the count
is ``1 + tiles * (per_tile + 1)``: the allocation, then per output tile the statements
computing it and its store. A call computes one result tile from its inputs' tiles,
once per chunk of the dimensions it reduces, folding each later partial in. The count
is exact unless some tensor is read twice (a computed tile is then emitted once, a
loaded one once per loop iteration, fewer than counted) or through a broadcast
operand: then ``tile`` refuses by a lower bound before emitting, and ``emit`` stops
once it passes the limit.

>>> from nkigym_graph.ir.ops import NC_MATMUL
>>> from nkigym_graph.ir.targets import TRN2
>>> from nkigym_graph.tiling.dimensions import analyze
>>> from nkigym_graph.tiling.trace import Trace
>>> trace = Trace()
>>> a, b = trace.param("a", (128, 128)), trace.param("b", (128, 256))
>>> statement_bounds(analyze(trace, trace.record(NC_MATMUL, (a, b), ()), TRN2))
(9, 9)
"""

from __future__ import annotations

from math import prod

from nkigym_graph.ir.ops import BROADCAST
from nkigym_graph.tiling.combine import combine_rule
from nkigym_graph.tiling.dimensions import DimensionAnalysis
from nkigym_graph.tiling.emit import kept_sources
from nkigym_graph.tiling.errors import StatementLimitError
from nkigym_graph.tiling.trace import Call


def statement_bounds(dims: DimensionAnalysis) -> tuple[int, int]:
    """Lower and upper bounds on the statements of the tiled program, equal when no
    tensor is read twice. Every output tile needs its own statement, its parameter
    loads and its store, hence the lower bound."""
    reads = [t.source for call in dims.calls for t in call.inputs]
    per_tile: dict[str | Call, int] = dict.fromkeys(dims.params, 1)  # one load
    for call in dims.calls:
        write = len(call.op.operand_names) - 1
        out_labels = set(call.op.axes[write])
        reduced: dict[str, int] = {}
        for labels, tensor in zip(call.op.axes, call.inputs, strict=False):
            for label, axis in zip(labels, tensor.axes, strict=True):
                if label not in out_labels and label != BROADCAST:
                    reduced.setdefault(label, len(dims.tiles(axis)))
        chunks = prod(reduced.values())
        one = sum(per_tile[t.source] for t in call.inputs) + 1
        rule = combine_rule(call.op, call.attrs) if chunks > 1 else None
        folds = 0 if rule is None or rule.op is None else chunks - 1
        finish = 1 if rule is not None and rule.divide else 0
        per_tile[call] = chunks * one + folds + finish
    out = dims.output
    tiles = prod(len(dims.tiles(axis)) for axis in out.axes)
    upper = 1 + tiles * (per_tile[out.source] + 1)
    kept = kept_sources(dims.calls)
    if len(reads) == len(set(reads)) and not kept:
        return upper, upper
    return 1 + tiles * (_per_output_tile(dims, kept) + 1), upper


def _per_output_tile(dims: DimensionAnalysis, kept: set[str | Call]) -> int:
    """Statements every output tile needs of its own: the call computing it and a load of
    each parameter that call reads directly (unless loaded once for all tiles)."""
    source = dims.output.source
    if not isinstance(source, Call):
        return 1
    return 1 + len({t.source for t in source.inputs if isinstance(t.source, str) and t.source not in kept})


def refuse(name: str, amount: str, limit: int) -> StatementLimitError:
    """The error for a program of ``amount`` statements (``"1,024"``, ``"at least 9"``)."""
    return StatementLimitError(
        f"{name}: the tiled program would have {amount} statements, over the limit of {limit:,}; "
        "tile smaller shapes or raise max_statements (CLI: --max-statements)"
    )
