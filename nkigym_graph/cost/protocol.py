"""The cost-model protocol: a ``name`` and ``estimate(program) -> CostReport``.

Cost models are plugins (``nkigym_graph_register_cost_models``), instantiated once
without arguments; the built-in ones are ``trn2`` (``nkigym_graph_plugins.trn2_cost``,
Trainium) and ``tenstorrent`` (``nkigym_graph_plugins.tenstorrent_cost``). A model may
name the target families it prices in a ``families`` tuple (``("neuron",)``,
``("tenstorrent",)``): ``estimate`` and ``search`` pick the model of a program's target
family when none is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from nkigym_graph.cost.report import CostReport
    from nkigym_graph.program import Program


@runtime_checkable
class CostModel(Protocol):
    """Anything with a ``name`` and an ``estimate`` method."""

    name: str

    def estimate(self, program: Program) -> CostReport:
        """The modeled cost of ``program`` on its target."""
        ...
