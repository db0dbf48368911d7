"""The names of stitched weight parameters, and the columns no load may cross.

The ``weight_stitch`` transform replaces weights ``w1 [64, 96]`` and ``w2 [128, 32]`` by
one parameter named after them, in column order::

    stitched__w1_64x96__w2_128x32

The name alone gives every weight's name and original ``[K, N]`` and, from the order,
its columns, so the layout is part of the program: it survives every rewrite and text
round trip (``nkigym_graph.stitching`` builds on it). A target whose backend keeps the
weights apart (fact ``stitched_weights_apart``: the Buda backend lifts each weight as a
tensor of its own) has *fences* at the columns where one weight ends and the next
starts: no statement may read across one, so merges stop there.

>>> parse_stitched_name("stitched__w1_64x96__w2_128x32")
(('w1', (64, 96)), ('w2', (128, 32)))
>>> weight_fences("stitched__w1_64x96__w2_128x32")
(96,)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

PREFIX = "stitched"
SEPARATOR = "__"
WEIGHT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")
_COMPONENT = re.compile(rf"(?P<name>{WEIGHT_NAME.pattern})_(?P<k>[1-9][0-9]*)x(?P<n>[1-9][0-9]*)")
COLUMNS = 1
"""The dimension along which a stitched parameter holds its weights side by side."""

WeightLayout = tuple[tuple[str, tuple[int, int]], ...]
"""``(name, (K, N))`` of each stitched weight, in column order."""

Fences = Mapping[str, Mapping[int, frozenset[int]]]
"""Tensor name -> dimension -> the positions along it that no statement's range may
cross (a range may end or start there)."""


def parse_stitched_name(name: str) -> WeightLayout | None:
    """The weights a stitched parameter name lists, or None if ``name`` is not one."""
    prefix, *components = name.split(SEPARATOR)
    if prefix != PREFIX or len(components) < 2:
        return None
    layout = []
    for component in components:
        match = _COMPONENT.fullmatch(component)
        if match is None:
            return None
        layout.append((match["name"], (int(match["k"]), int(match["n"]))))
    if len({weight for weight, _ in layout}) != len(layout):
        return None
    return tuple(layout)


def weight_fences(name: str) -> tuple[int, ...]:
    """The columns of stitched parameter ``name`` where one weight ends and the next
    starts (empty for a name that is not a stitched one)."""
    layout = parse_stitched_name(name)
    if layout is None:
        return ()
    columns, column = [], 0
    for _, (_, width) in layout[:-1]:
        column += width
        columns.append(column)
    return tuple(columns)


def fences_of(program: Program) -> Fences:
    """``program``'s fences: on a target with fact ``stitched_weights_apart``, each
    stitched parameter's weight boundaries along its columns; elsewhere none."""
    if not program.target.facts.get("stitched_weights_apart", False):
        return MappingProxyType({})
    found = {}
    for param in program.params:
        columns = weight_fences(param.name)
        if columns:
            found[param.name] = MappingProxyType({COLUMNS: frozenset(columns)})
    return MappingProxyType(found)
