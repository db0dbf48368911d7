"""``affine_select`` -> ``nisa.affine_select`` on the GpSimd Engine.

The statement's predicate ``cmp(offset + channel_multiplier * i + step * j, 0)`` over
its tile is the instruction's own: one access-pattern dimension ``[[step, F]]`` over
the tile's ``F`` columns, ``channel_multiplier`` per partition, ``cmp_op=nl.<cmp>``.
The GpSimd Engine reads and writes SBUF only, so a tile in PSUM (a matmul's scores) is
copied out first::

    nisa.affine_select(dst=t, pattern=[[-1, 128]], offset=-128, channel_multiplier=1,
                       on_true_tile=scores_sb, on_false_value=float("-inf"),
                       cmp_op=nl.greater_equal)
"""

from __future__ import annotations

from nkigym_graph.ir.literals import format_literal
from nkigym_graph.ir.statement import Statement

from .builder import KernelBuilder
from .engines import GPSIMD
from .errors import NkiEmitError


class AffineSelectLowering:
    op_name = "affine_select"
    psum_native = False
    sinks = False
    sbuf_operands = frozenset({0})
    engines = (GPSIMD,)

    def lower(self, node: int, stmt: Statement, kb: KernelBuilder) -> None:
        text = kb.describe(node)
        if stmt.accumulate:
            raise NkiEmitError("affine_select cannot accumulate (+=) into its destination", text)
        values = stmt.op.attr_values(stmt.attrs)
        data = kb.read(stmt.operands[0], text, sbuf=True)
        (_, _), (f0, f1) = stmt.operands[0].slices
        dst = kb.write(stmt.dst)
        kb.call(
            "nisa.affine_select",
            ("dst", dst),
            ("pattern", f"[[{values['step']}, {f1 - f0}]]"),
            ("offset", str(values["offset"])),
            ("channel_multiplier", str(values["channel_multiplier"])),
            ("on_true_tile", data),
            ("on_false_value", format_literal(float(values["fill"]))),
            ("cmp_op", f"nl.{values['cmp']}"),
        )
