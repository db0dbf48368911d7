"""``emit``: a program through a registered backend (``nkigym_graph.plugin.protocols.Backend``).
A backend that raises or returns something other than an ``Artifact`` is a
``PluginError`` naming it and its plugin (``nkigym_graph.plugin.calls``).

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> emit_artifact(tiled_matmul(128, 128, 128), backend="nki").suffix
'.py'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nkigym_graph.errors import NkigymError
from nkigym_graph.ir.arguments import require_type
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.targets import Target
from nkigym_graph.plugin.calls import emit_with
from nkigym_graph.plugin.protocols import Artifact, Backend
from nkigym_graph.plugin.registry import get_target, lookup, registered_backends


class EmitError(NkigymError):
    """An argument ``emit`` cannot take (a backend's own errors name its rules)."""


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
    return emit_with(chosen, program, resolved, **options)


def emit(program: Program, backend: str = "nki", target: str | Target | None = None, **options: Any) -> str:
    """Emit ``program`` through ``backend`` and return the text (NKI source, netlist YAML).
    ``emit_artifact`` returns the full ``Artifact`` (parsed form and facts included)."""
    return emit_artifact(program, backend, target, **options).text
