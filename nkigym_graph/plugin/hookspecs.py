"""The hooks a plugin implements, and ``hookimpl``, the marker of an implementation.
Built-in plugins (``nkigym_graph_plugins``) and third party packages look the same: a
module with ``@nkigym_graph.hookimpl`` functions, registered through the
``nkigym_graph`` entry-point group.

Registration hooks hand over classes (or target values); the manager instantiates
transforms, backends and cost models once and keys them by their ``name``.

Example plugin module::

    import nkigym_graph

    class Fuse:
        name = "fuse"
        def analyze(self, program): ...
        def rewrite(self, program, match): ...

    @nkigym_graph.hookimpl
    def nkigym_graph_register_transforms():
        return [Fuse]
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

    Each class has a ``name`` (unique across plugins), ``analyze(program) ->
    list[Match]`` and ``rewrite(program, match) -> Program`` (see
    ``nkigym_graph.rewriting.transform.Transform``). It is instantiated once, without arguments.
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
    """Return ``nkigym_graph.Target`` values (new hardware); names must not clash with
    the built-in targets (``trn2``, ``trn1``, ``grayskull``, ``wormhole_b0``, ``blackhole``)."""
    raise NotImplementedError  # a specification: plugins implement it


@hookspec
def nkigym_graph_register_cost_models() -> list[type[CostModel]]:
    """Return cost-model classes: ``name`` and ``estimate(program) -> CostReport``
    (see ``nkigym_graph.plugin.protocols.CostModel``). Instantiated once, without arguments."""
    raise NotImplementedError  # a specification: plugins implement it


@hookspec
def nkigym_graph_program_rewritten(transform_name: str, before: Program, after: Program) -> None:
    """Called after every successful rewrite with the transform's name and the input and
    output programs (read-only snapshots): for logging, tracing or statistics."""
