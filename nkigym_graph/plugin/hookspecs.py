"""The hooks a plugin implements, and ``hookimpl``, the marker of an implementation.
Built-in plugins (``nkigym_graph_plugins``) and third party packages look the same: a
module with ``@nkigym_graph.hookimpl`` functions, registered through the
``nkigym_graph`` entry-point group.

Registration hooks hand over classes (or target values); the registry instantiates
transforms, backends and cost models once, without arguments, and keys them by their
``name`` (a non-empty str). What a hook raises or returns that is not a list of what it
registers is a ``PluginError`` naming the plugin, when the registry collects it.

Example plugin module::

    import nkigym_graph
    from nkigym_graph import Pattern, PatternTransform
    from nkigym_graph.rewriting.patterns import forward

    class DropCopies(PatternTransform):
        name = "drop_copies"
        pattern = Pattern("activation", op="copy", capture="copy")

        def edit(self, program, found):
            return forward(program, found["copy"])

    @nkigym_graph.hookimpl
    def nkigym_graph_register_transforms():
        return [DropCopies]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program
    from nkigym_graph.ir.targets import Target
    from nkigym_graph.plugin.protocols import Backend, CostModel
    from nkigym_graph.rewriting.transform import Transform

PROJECT = "nkigym_graph"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
"""Marks a plugin's hook implementation (``nkigym_graph.hookimpl``)."""


@hookspec
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    """Return transform classes this plugin provides.

    Each subclasses ``nkigym_graph.Transform`` (most easily ``nkigym_graph.PatternTransform``:
    a ``pattern`` and ``edit``; else ``analyze(program) -> list[Match]``) and has a ``name``
    unique across plugins. It is instantiated once, without arguments.
    """
    raise NotImplementedError  # a specification: plugins implement it


@hookspec
def nkigym_graph_register_backends() -> list[type[Backend]]:
    """Return backend classes this plugin provides.

    Each class has a ``name`` and ``emit(program, target, **options) -> Artifact``
    (see ``nkigym_graph.plugin.protocols.Backend``). It is instantiated once, without arguments.
    """
    raise NotImplementedError  # a specification: plugins implement it


@hookspec
def nkigym_graph_register_targets() -> list[Target]:
    """Return ``nkigym_graph.Target`` values (new hardware), found by name in any case;
    names must not clash, in any case, with the built-in targets (``trn2``, ``trn1``,
    ``grayskull``, ``wormhole_b0``, ``blackhole``) or another plugin's."""
    raise NotImplementedError  # a specification: plugins implement it


@hookspec
def nkigym_graph_register_cost_models() -> list[type[CostModel]]:
    """Return cost-model classes: ``name``, ``estimate(program) -> CostReport`` and
    optionally ``families``, a tuple of the target families it prices (see
    ``nkigym_graph.plugin.protocols.CostModel``). Instantiated once, without arguments. A
    program's target family gets the first registered model naming it: the built-in
    ``trn2`` and ``tenstorrent`` models keep theirs."""
    raise NotImplementedError  # a specification: plugins implement it


@hookspec
def nkigym_graph_program_rewritten(transform_name: str, before: Program, after: Program) -> None:
    """Called after every successful rewrite with the transform's name and the input and
    output programs (read-only snapshots): for logging, tracing or statistics. An
    implementation is a plain function (not a wrapper) and may take a subset of the
    arguments; one that raises is an ``ObserverError`` naming its plugin."""
