"""The backend protocol and ``emit``.

A backend has a ``name`` and ``emit(program, target, **options) -> Artifact``. The
artifact carries the emitted text (NKI source, netlist YAML), an optional parsed form
(e.g. the netlist as a dict) and any facts worth reporting (line counts, circular
buffers, ...). Backends are plugins (``nkigym_graph_register_backends``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from nkigym_graph.errors import NkigymError
from nkigym_graph.ir.arguments import require_type
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.targets import Target, get_target
from nkigym_graph.plugin_manager import lookup, registered_backends


class EmitError(NkigymError):
    """An argument ``emit`` cannot take (a backend's own errors name its rules)."""


@dataclass(frozen=True)
class Artifact:
    """What a backend produced for one program."""

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
        object.__setattr__(self, "facts", MappingProxyType(dict(self.facts)))

    def __str__(self) -> str:
        return self.text


class Backend:
    """Base class for backends: subclasses set ``name`` and implement ``emit``."""

    name: str = ""
    default_target: str = "trn2"

    def emit(self, program: Program, target: Target, **options: Any) -> Artifact:
        """Translate ``program`` for ``target``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<backend {self.name}>"


def backends() -> Mapping[str, Backend]:
    """Every registered backend, by name."""
    return registered_backends()


def emit_artifact(
    program: Program, backend: str = "nki", target: str | Target | None = None, **options: Any
) -> Artifact:
    """Emit ``program`` through ``backend``; the target defaults to the program's."""
    require_type(program, Program, "program", EmitError, "a Program (from tile or parse_program)")
    chosen: Backend = lookup("backend", backends(), backend)
    resolved = get_target(target) if target is not None else program.target
    return chosen.emit(program, resolved, **options)


def emit(program: Program, backend: str = "nki", target: str | Target | None = None, **options: Any) -> str:
    """Emit ``program`` through ``backend`` and return the text (NKI source, netlist YAML).
    ``emit_artifact`` returns the full ``Artifact`` (parsed form and facts included)."""
    return emit_artifact(program, backend, target, **options).text
