"""What plugins hand over besides transforms: backends and cost models.

A backend has a ``name`` and ``emit(program, target, **options) -> Artifact``, and may
``run(artifact, inputs)`` to evaluate what it emitted. The
artifact carries the emitted text (NKI source, netlist YAML), an optional parsed form
(e.g. the netlist as a dict) and any facts worth reporting (line counts, circular
buffers, ...). A cost model has a ``name`` and ``estimate(program) -> CostReport``.
Both are plugins (``nkigym_graph_register_backends``,
``nkigym_graph_register_cost_models``), instantiated once without arguments; the
built-in ones are ``nki``, ``buda``, ``trn2`` (Trainium) and ``tenstorrent``
(``nkigym_graph_plugins``). A cost model may name the target families it prices in a
``families`` tuple (``("neuron",)``, ``("tenstorrent",)``): ``estimate`` and ``search``
pick the model of a program's target family when none is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from nkigym_graph.errors import PluginError
from nkigym_graph.ir.arguments import require_type

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program
    from nkigym_graph.ir.targets import Target
    from nkigym_graph.plugin.cost_report import CostReport


@dataclass(frozen=True)
class Artifact:
    """What a backend produced for one program (a ``PluginError`` if a field has the wrong type)."""

    backend: str
    text: str
    """The emitted source or document."""
    parsed: Any = None
    """A structured form of ``text`` where one exists (a netlist dict)."""
    facts: Mapping[str, Any] = field(default_factory=dict)
    """Numbers and notes about the output (e.g. ``lines``, ``circular_buffers``)."""
    suffix: str = ".txt"
    """File suffix for writing ``text`` (``.py`` for NKI, ``.yaml`` for netlists)."""

    def __post_init__(self) -> None:
        for name in ("backend", "text", "suffix"):
            require_type(getattr(self, name), str, f"Artifact {name}", PluginError, "a str")
        require_type(self.facts, Mapping, "Artifact facts", PluginError, "a mapping")
        object.__setattr__(self, "facts", MappingProxyType(dict(self.facts)))

    def __str__(self) -> str:
        return self.text


class Backend:
    """Base class for backends: subclasses set ``name`` and implement ``emit``."""

    name: str = ""

    def emit(self, program: Program, target: Target, **options: Any) -> Artifact:
        """Translate ``program`` for ``target``."""
        raise NotImplementedError

    def run(self, artifact: Artifact, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """The program's outputs by name, computed from ``artifact`` on the program's
        ``inputs`` (by name) by the backend's own reference evaluation, for backends that
        have one (``buda`` evaluates its netlist in numpy)."""
        raise NotImplementedError(f"the {self.name} backend does not run its artifacts")

    def __repr__(self) -> str:
        return f"<backend {self.name}>"


@runtime_checkable
class CostModel(Protocol):
    """Anything with a ``name`` and an ``estimate`` method."""

    name: str

    def estimate(self, program: Program) -> CostReport:
        """The modeled cost of ``program`` on its target."""
        ...
