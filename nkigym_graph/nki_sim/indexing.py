"""Index checking: turn a kernel's index into a numpy basic index, or fail clearly.

numpy silently clips out-of-range slices (``t[0:256]`` of a 128-row tile has 128 rows);
NKI rejects them, and so does this. Supported: ints, slices with a positive step,
``nl.ds(start, size)`` (a slice), and one ``...``. Negative ints and slice bounds count
from the end, as in Python. The result always ends in ``...`` so that indexing returns a
view, never a numpy scalar.
"""

from __future__ import annotations

import operator
from typing import Any, NoReturn

import numpy as np

from nkigym_graph.nki_sim.state import fail as _fail

_WHERE = "tensor indexing"


def fail(rule: str, detail: str) -> NoReturn:
    _fail(rule, detail, outside=_WHERE)


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool | np.bool_):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _norm_slice(key: slice, dim: int, axis: int) -> slice:
    start, stop, step = key.start, key.stop, key.step
    step_i = 1 if step is None else _as_int(step)
    if step_i is None or step_i <= 0:
        fail("index.step", f"axis {axis}: slice step {step!r} is not a positive int")
    bounds = []
    for value, default in ((start, 0), (stop, dim)):
        if value is None:
            bounds.append(default)
            continue
        as_int = _as_int(value)
        if as_int is None:
            fail("index.type", f"axis {axis}: slice bound {value!r} is not an int")
        bounds.append(as_int + dim if as_int < 0 else as_int)
    lo, hi = bounds
    if lo < 0 or hi > dim or lo > dim:
        fail("index.bounds", f"axis {axis}: slice {lo}:{hi} is outside size {dim}")
    if hi <= lo:
        fail("index.empty", f"axis {axis}: slice {lo}:{hi} selects nothing")
    return slice(lo, hi, step_i)


def normalize_index(key: Any, shape: tuple[int, ...], on_chip: bool) -> tuple[Any, ...]:
    """A checked numpy basic index for ``key`` on a tensor of ``shape``."""
    items = key if isinstance(key, tuple) else (key,)
    ellipses = sum(1 for k in items if k is Ellipsis)
    if ellipses > 1:
        fail("index.rank", "more than one '...' in an index")
    explicit = len(items) - ellipses
    if explicit > len(shape):
        fail("index.rank", f"{explicit} indices for a {len(shape)}-D tensor of shape {shape}")
    expanded: list[Any] = []
    for k in items:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - explicit))
        else:
            expanded.append(k)
    out: list[Any] = []
    for axis, (k, dim) in enumerate(zip(expanded, shape, strict=False)):
        if isinstance(k, slice):
            out.append(_norm_slice(k, dim, axis))
            continue
        as_int = _as_int(k)
        if as_int is None:
            fail(
                "index.type",
                f"axis {axis}: index of type {type(k).__name__} (use ints, slices, nl.ds or ...)",
            )
        if not -dim <= as_int < dim:
            fail("index.bounds", f"axis {axis}: index {as_int} is outside size {dim}")
        if axis == 0 and on_chip:
            fail(
                "index.partition_int",
                f"int index {as_int} on the partition dim; use a slice such as "
                f"[{as_int}:{as_int + 1}] to keep the partition axis",
            )
        out.append(as_int + dim if as_int < 0 else as_int)
    out.append(Ellipsis)
    return tuple(out)
