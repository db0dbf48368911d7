"""GpSimd Engine affine instructions: ``nisa.iota`` and ``nisa.affine_select``.

Both evaluate an affine expression of each element's position (NKI's access pattern,
as in the current ``nki.isa`` reference)::

    value = offset + partition * channel_multiplier + sum(step_d * index_d)

over the pattern ``[[step_w, num_w], [step_z, num_z], [step_y, num_y], [step_x, num_x]]``
(fewer than four pairs are the innermost ones; the others have size 1): the free
elements of a partition are the pattern's indexes in row-major order, so their count
must equal ``num_w * num_z * num_y * num_x``. ``iota`` writes the value;
``affine_select`` keeps ``on_true_tile``'s element where ``cmp_op(value, 0)`` holds and
writes the number ``on_false_value`` elsewhere (a causal mask:
``pattern=[[-1, F]], offset=0, channel_multiplier=1, cmp_op=nl.greater_equal`` keeps
column ``j`` of partition ``i`` when ``i - j >= 0``). Both run on the GpSimd Engine, so
every tile they touch is in SBUF.
"""

from __future__ import annotations

import numbers
import operator
from typing import Any

import numpy as np

from nkigym_graph.nki_sim.instruction import instruction
from nkigym_graph.nki_sim.mathops import MATH_OPS
from nkigym_graph.nki_sim.operands import as_f32, check_dst, layout, on_chip, op_arg, uses, write
from nkigym_graph.nki_sim.state import fail
from nkigym_graph.nki_sim.tensor import Tensor

Array = np.ndarray[Any, Any]

_COMPARISONS = ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal")
"""The ``cmp_op`` operators ``affine_select`` accepts."""


def _integer(value: Any, role: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        fail("affine.operand", f"{role} must be an integer, got {value!r}")
    return operator.index(value)


def _pattern(pattern: Any, elements: int, role: str) -> list[tuple[int, int]]:
    """``pattern`` as ``(step, count)`` pairs, outermost first, covering ``elements``."""
    if not isinstance(pattern, list | tuple) or not 1 <= len(pattern) <= 4:
        fail("affine.pattern", f"{role} must be a list of 1 to 4 [step, num] pairs, got {pattern!r}")
    pairs = []
    for pair in pattern:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            fail("affine.pattern", f"{role} entry {pair!r} must be a [step, num] pair")
        step, count = _integer(pair[0], f"{role} step"), _integer(pair[1], f"{role} num")
        if count < 1:
            fail("affine.pattern", f"{role} num must be >= 1, got {count}")
        pairs.append((step, count))
    total = int(np.prod([count for _, count in pairs]))
    if total != elements:
        fail(
            "affine.pattern",
            f"{role} {pattern!r} covers {total} elements per partition, the tile holds {elements}",
        )
    return pairs


def affine_values(partitions: int, pattern: list[tuple[int, int]], offset: int, multiplier: int) -> Array:
    """``[partitions, elements]`` int64: the affine expression at every element."""
    value = np.full((partitions, 1), offset, dtype=np.int64)
    value = value + np.arange(partitions, dtype=np.int64)[:, None] * multiplier
    free = np.zeros((), dtype=np.int64)
    for step, count in pattern:
        free = free[..., None] + np.arange(count, dtype=np.int64) * step
    return value + free.reshape(1, -1)


def _sbuf(value: Any, role: str) -> Tensor:
    tensor = on_chip(value, role)
    if tensor.buffer.kind != "sbuf":
        fail("engine.psum", f"{role} must be in SBUF: the GpSimd Engine cannot access PSUM")
    return tensor


@instruction("nisa.iota")
def iota(dst: Any, pattern: Any, offset: Any, channel_multiplier: Any = 0, name: Any = None) -> None:
    """``dst[p, ...] = offset + p * channel_multiplier + pattern index`` (see the module docstring)."""
    out = _sbuf(dst, "dst")
    uses(out)
    partitions, elements = layout(out)
    pairs = _pattern(pattern, elements, "pattern")
    values = affine_values(
        partitions, pairs, _integer(offset, "offset"), _integer(channel_multiplier, "channel_multiplier")
    )
    write(out, values)


@instruction("nisa.affine_select")
def affine_select(
    dst: Any,
    pattern: Any,
    offset: Any,
    channel_multiplier: Any,
    on_true_tile: Any,
    on_false_value: Any,
    cmp_op: Any = None,
    name: Any = None,
) -> None:
    """``dst = on_true_tile`` where ``cmp_op(affine value, 0)``, else ``on_false_value``."""
    out, data = _sbuf(dst, "dst"), _sbuf(on_true_tile, "on_true_tile")
    uses(out, data)
    partitions, elements = layout(data)
    check_dst(out, partitions, elements, f"on_true_tile {data.shape}")
    pairs = _pattern(pattern, elements, "pattern")
    if isinstance(on_false_value, bool) or not isinstance(on_false_value, numbers.Real):
        fail("affine.operand", f"on_false_value must be a number, got {on_false_value!r}")
    compare = op_arg(cmp_op if cmp_op is not None else MATH_OPS["equal"], "cmp_op", binary=True)
    if compare.name not in _COMPARISONS:
        fail("op.invalid", f"cmp_op must be a comparison ({', '.join(_COMPARISONS)}), got {compare!r}")
    values = affine_values(
        partitions, pairs, _integer(offset, "offset"), _integer(channel_multiplier, "channel_multiplier")
    )
    assert compare.binary is not None
    keep = np.asarray(compare.binary(values, np.zeros((), dtype=np.int64))).astype(bool)
    fill = np.float32(on_false_value)
    write(out, np.where(keep, as_f32(data).reshape(partitions, elements), fill))
