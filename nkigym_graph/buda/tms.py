"""Input tensor manipulations (TMs) as listed in a netlist.

Spellings read (a list per input, in order):

- ``broadcast: {r: 4}`` / ``{c: n}`` / ``{z: n}``: repeat whole tiles ``n`` times along
  that dim (several dims in one map give one TM each, in map order);
- ``tile_broadcast: r`` / ``c``: inside every tile, copy row 0 (``r``) or column 0 (``c``)
  to the whole tile (fused sub-ops only);
- ``transpose``: swap rows and columns;
- ``hslice: n`` / ``hstack: n`` / ``vslice: n`` / ``vstack: n``: move column (h) or row (v)
  slices to and from the ``t`` dim;
- ``pad: [rt, ct, value]``: known to the backend, not modelled here (kept by name);
- anything else is kept by name so the checker (rule ``tms.unknown``) and the evaluator
  can name it. A TM that takes an argument, written as a bare name (``- hslice``), is
  refused when read.

Null, ``None`` and ``[]`` mean no TMs.

What each TM does to a tensor's shape in tiles, ``(t, rows, cols)``, is :data:`TM_SHAPES`
(the graph-level shape rules use it):

>>> tms_shape((2, 4, 6), (Tm("hslice", factor=3), Tm("transpose")))
(6, 2, 4)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from nkigym_graph.buda.fields import Where
from nkigym_graph.buda.yaml_loader import is_empty_tms

SLICE_TMS = ("hslice", "hstack", "vslice", "vstack")
ARGUMENT_EXAMPLES: Mapping[str, str] = {
    "broadcast": "broadcast: {r: 2}",
    "tile_broadcast": "tile_broadcast: c",
    **{name: f"{name}: 2" for name in SLICE_TMS},
}
"""TMs that take an argument, each with an example of its spelling."""
Shape = tuple[int, int, int]
"""A tensor's ``(t, rows, cols)``, rows and columns in tiles."""


@dataclass(frozen=True)
class Tm:
    """One TM: ``name`` (``broadcast``, ``tile_broadcast``, ``transpose``, ``hslice``, ...),
    the ``dim`` it acts on (``r``/``c``/``z`` or None) and an integer ``factor`` (or None)."""

    name: str
    dim: str | None = None
    factor: int | None = None

    def __str__(self) -> str:
        if self.name == "broadcast":
            return f"broadcast {{{self.dim}: {self.factor}}}"
        if self.name == "tile_broadcast":
            return f"tile_broadcast {self.dim}"
        return self.name if self.factor is None else f"{self.name} {self.factor}"


def _parse_one(item: Any, where: Where) -> list[Tm]:
    if isinstance(item, str):
        if item in ARGUMENT_EXAMPLES:
            raise where.error(item, None, f"{item} needs an argument, e.g. {ARGUMENT_EXAMPLES[item]}")
        return [Tm(item)]
    if not isinstance(item, Mapping):
        raise where.error(item, None, f"a TM must be a name or a one-key map, got {item!r}")
    tms: list[Tm] = []
    for name, arg in item.items():
        if name == "broadcast":
            if not isinstance(arg, Mapping):
                raise where.error(item, None, f"broadcast needs a map like {{r: 2}}, got {arg!r}")
            for dim, factor in arg.items():
                if dim not in ("r", "c", "z"):
                    raise where.error(item, None, f"broadcast along r, c or z, got {dim!r}")
                if not isinstance(factor, int) or isinstance(factor, bool) or factor < 1:
                    raise where.error(item, None, f"broadcast factor must be >= 1, got {factor!r}")
                tms.append(Tm("broadcast", str(dim), factor))
        elif name == "tile_broadcast":
            if arg not in ("r", "c"):
                raise where.error(item, None, f"tile_broadcast copies row 0 (r) or column 0 (c), got {arg!r}")
            tms.append(Tm("tile_broadcast", str(arg)))
        elif name in SLICE_TMS:
            if not isinstance(arg, int) or isinstance(arg, bool) or arg < 1:
                raise where.error(item, None, f"{name} factor must be >= 1, got {arg!r}")
            tms.append(Tm(str(name), factor=arg))
        else:
            tms.append(Tm(str(name), factor=arg if isinstance(arg, int) else None))
    return tms


def parse_tms(value: Any, where: Where) -> tuple[Tm, ...]:
    """The TMs of one input, in order."""
    if is_empty_tms(value):
        return ()
    items = value if isinstance(value, list) else [value]
    return tuple(tm for item in items for tm in _parse_one(item, where))


def parse_input_tms(spec: Mapping[Any, Any], n_inputs: int, where: Where) -> dict[int, tuple[Tm, ...]]:
    """All ``input_<i>_tms`` keys of an op or sub-op, by input index."""
    tms: dict[int, tuple[Tm, ...]] = {}
    for key, value in spec.items():
        if not (isinstance(key, str) and key.startswith("input_") and key.endswith("_tms")):
            continue
        index_text = key[len("input_") : -len("_tms")]
        if not index_text.isdigit():
            raise where.error(spec, key, "TM keys are spelled input_<index>_tms")
        index = int(index_text)
        if index >= n_inputs:
            raise where.error(spec, key, f"TMs for input {index} but there are {n_inputs} inputs")
        parsed = parse_tms(value, where.inner(key))
        if parsed:
            tms[index] = parsed
    return tms


def broadcast_factor(tms: tuple[Tm, ...], dim: str) -> int:
    """Product of the ``broadcast`` factors along ``dim`` (1 when none)."""
    factor = 1
    for tm in tms:
        if tm.name == "broadcast" and tm.dim == dim and tm.factor:
            factor *= tm.factor
    return factor


def _broadcast(shape: Shape, tm: Tm) -> Shape:
    t, rows, cols = shape
    n = tm.factor or 1
    return {"z": (t * n, rows, cols), "r": (t, rows * n, cols), "c": (t, rows, cols * n)}[str(tm.dim)]


def _split(size: int, n: int, what: str, tm: Tm) -> int:
    if n < 1 or size % n:
        raise ValueError(f"{tm} needs {what} a multiple of {n}, got {size}")
    return size // n


def _hslice(shape: Shape, tm: Tm) -> Shape:
    t, rows, cols = shape
    n = tm.factor or 1
    return t * n, rows, _split(cols, n, "tile columns", tm)


def _hstack(shape: Shape, tm: Tm) -> Shape:
    t, rows, cols = shape
    n = tm.factor or 1
    return _split(t, n, "t", tm), rows, cols * n


def _vslice(shape: Shape, tm: Tm) -> Shape:
    t, rows, cols = shape
    n = tm.factor or 1
    return t * n, _split(rows, n, "tile rows", tm), cols


def _vstack(shape: Shape, tm: Tm) -> Shape:
    t, rows, cols = shape
    n = tm.factor or 1
    return _split(t, n, "t", tm), rows * n, cols


TM_SHAPES: Mapping[str, Callable[[Shape, Tm], Shape]] = {
    "broadcast": _broadcast,
    "tile_broadcast": lambda shape, _: shape,
    "transpose": lambda shape, _: (shape[0], shape[2], shape[1]),
    "hslice": _hslice,
    "hstack": _hstack,
    "vslice": _vslice,
    "vstack": _vstack,
}
"""What each modelled TM does to a ``(t, rows, cols)`` shape in tiles; raises ``ValueError``
naming the TM when it cannot apply (a slice or stack factor that does not divide)."""
KNOWN_TMS: frozenset[str] = frozenset(TM_SHAPES) | {"pad"}
"""Every TM name the backend's netlist parser accepts (``parse_tm_info``)."""


def tms_shape(shape: Shape, tms: tuple[Tm, ...]) -> Shape | None:
    """``shape`` after ``tms`` in order; None after a TM whose effect is not modelled
    (``pad``, an unknown name). Raises ``ValueError`` for a TM that cannot apply."""
    for tm in tms:
        step = TM_SHAPES.get(tm.name)
        if step is None:
            return None
        shape = step(shape, tm)
    return shape
