"""DOT pictures of a program's DAG (pydot; Graphviz renders ``.svg``/``.png``).

``to_dot(program)`` draws statements as boxes coloured by op, parameters (ellipses) and
outputs (octagons) with the slice each load reads or store writes on the arrow, data
edges with the region read, dashed ordering edges, a title (name, statement count,
target, hash prefix) and a legend. Large programs are folded (``nkigym_graph.dot.folding``);
``to_dot_diff(before, after)`` colours what a rewrite removed, added or changed
(``nkigym_graph.dot.diff``). The same input always gives the same DOT text.

Modules: ``style`` (colours), ``scene`` (what is drawn), ``folding``, ``diff``,
``legend``, ``render`` (scene to pydot) and ``writing`` (files).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from nkigym_graph.dot.diff import diff_scene
from nkigym_graph.dot.folding import (
    AUTO_FOLD_ABOVE,
    AUTO_FOLD_WIDER_THAN,
    FOLDS,
    Fold,
    Grouping,
    group_keys,
    group_label,
    resolve_fold,
)
from nkigym_graph.dot.render import render
from nkigym_graph.dot.scene import Scene, program_scene
from nkigym_graph.dot.style import op_color
from nkigym_graph.dot.writing import save
from nkigym_graph.errors import NkigymError
from nkigym_graph.ir.arguments import describe, require_program, require_type
from nkigym_graph.ir.program import Program

if TYPE_CHECKING:
    import pydot

__all__ = [
    "AUTO_FOLD_ABOVE",
    "AUTO_FOLD_WIDER_THAN",
    "FOLDS",
    "Fold",
    "op_color",
    "to_dot",
    "to_dot_diff",
    "write_dot",
]


def to_dot(program: Program, fold: Fold = "auto", *, collapse: bool = True) -> pydot.Dot:
    """A ``pydot.Dot`` of the program.

    ``fold``: ``"auto"`` (by output tile above ``AUTO_FOLD_ABOVE`` statements or
    ``AUTO_FOLD_WIDER_THAN`` side by side),
    ``"tile"``, ``"op"``, ``"none"``/None, or a function ``statement -> group key``.
    ``collapse``: draw each group as one node (True) or as a cluster of its statements.
    """
    require_program(program, "program", NkigymError)
    chosen = resolve_fold(fold, program)
    grouping = group_keys(program, chosen, coarsen=fold == "auto")
    scene = program_scene(program, grouping.keys)
    return _draw(scene, chosen, collapse, program.name, grouping)


def to_dot_diff(before: Program, after: Program, fold: Fold = "auto", *, collapse: bool = True) -> pydot.Dot:
    """A picture of ``after`` showing what changed from ``before``: added statements
    green, changed ones yellow, removed ones (from ``before``) red and dashed, the
    rest grey; statements are matched by canonical key. Folding as in ``to_dot``."""
    require_program(before, "before", NkigymError)
    require_program(after, "after", NkigymError)
    chosen = resolve_fold(fold, before, after)
    coarsen = fold == "auto"
    before_grouping = group_keys(before, chosen, coarsen=coarsen)
    after_grouping = group_keys(after, chosen, coarsen=coarsen)
    scene, _ = diff_scene(before, after, before_grouping.keys, after_grouping.keys)
    return _draw(scene, chosen, collapse, after.name, after_grouping)


def write_dot(
    program: Program | pydot.Dot, path: str | Path, fold: Fold = "auto", *, collapse: bool = True
) -> Path:
    """Write a picture of a program (or a ``pydot.Dot``, e.g. from ``to_dot_diff``):
    ``.dot`` always works; ``.svg``/``.png``/``.pdf`` need Graphviz."""
    import pydot

    if not isinstance(program, (Program, pydot.Dot)):
        raise NkigymError(f"program must be a Program or a pydot.Dot, got {describe(program)}")
    require_type(path, (str, os.PathLike), "path", NkigymError, "a file path (str or Path)")
    if isinstance(program, pydot.Dot) and (fold != "auto" or collapse is not True):
        raise NkigymError("fold and collapse apply to a Program; a pydot.Dot is written as it is drawn")
    dot = to_dot(program, fold, collapse=collapse) if isinstance(program, Program) else program
    return save(dot, path)


def _draw(scene: Scene, fold: Fold, collapse: bool, name: str, grouping: Grouping) -> pydot.Dot:
    require_type(collapse, bool, "collapse", NkigymError, "True or False")
    if fold is not None:
        keys = dict.fromkeys(box.group for box in scene.boxes if box.group is not None)
        scene.group_labels = {key: group_label(key, fold, grouping.unit) for key in keys}
    return render(scene, collapse=collapse, fold_name=grouping.description, name=name)
