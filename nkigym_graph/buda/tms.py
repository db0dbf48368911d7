"""Input tensor manipulations (TMs) as listed in a netlist.

Spellings read (a list per input, in order):

- ``broadcast: {r: 4}`` / ``{c: n}`` / ``{z: n}``: repeat whole tiles ``n`` times along
  that dim (several dims in one map give one TM each, in map order);
- ``tile_broadcast: r`` / ``c``: inside every tile, copy row 0 (``r``) or column 0 (``c``)
  to the whole tile (fused sub-ops only);
- ``transpose``: swap rows and columns;
- ``hslice: n`` / ``hstack: n`` / ``vslice: n`` / ``vstack: n``: move column (h) or row (v)
  slices to and from the ``t`` dim;
- anything else is kept by name so the checker and evaluator can name it.

Null, ``None`` and ``[]`` mean no TMs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nkigym_graph.buda.fields import Where
from nkigym_graph.buda.yaml_loader import is_empty_tms

SLICE_TMS = ("hslice", "hstack", "vslice", "vstack")


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
