"""Calling what plugins contributed: a backend's ``emit`` and a cost model's
``estimate``. Whatever one raises (but nkigym's own errors, which name their rules) is
a ``PluginError`` naming it and its plugin, chaining the cause, and so is a result of
the wrong type or a ``PluginError`` of its making (an ``Artifact`` or ``CostReport``
with a wrong field).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from nkigym_graph.errors import NkigymError, PluginError
from nkigym_graph.foreign_errors import describe, where
from nkigym_graph.ir.arguments import describe as describe_value
from nkigym_graph.plugin.cost_report import CostReport
from nkigym_graph.plugin.protocols import Artifact
from nkigym_graph.plugin.registry import BACKENDS_HOOK, COST_MODELS_HOOK, plugin_of

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program
    from nkigym_graph.ir.targets import Target
    from nkigym_graph.plugin.protocols import Backend, CostModel

R = TypeVar("R")


def emit_with(backend: Backend, program: Program, target: Target, **options: Any) -> Artifact:
    """``backend.emit(program, target, **options)``, checked to be an ``Artifact``."""
    who = _who("backend", backend.name, BACKENDS_HOOK)
    artifact = _call(who, "emit", lambda: backend.emit(program, target, **options))
    return _checked(who, artifact, Artifact, "an Artifact")


def estimate_with(model: CostModel, program: Program) -> CostReport:
    """``model.estimate(program)``, checked to be a ``CostReport``."""
    who = _who("cost model", model.name, COST_MODELS_HOOK)
    report = _call(who, "estimate", lambda: model.estimate(program))
    return _checked(who, report, CostReport, "a CostReport")


def _who(kind: str, name: str, hook: str) -> str:
    """``backend 'nki' (plugin 'nki')``; without the plugin for an unregistered one."""
    plugin = plugin_of(hook, name)
    return f"{kind} {name!r}" + (f" (plugin {plugin!r})" if plugin is not None else "")


def _call(who: str, method: str, call: Callable[[], Any]) -> Any:
    try:
        return call()
    except PluginError as err:  # e.g. an Artifact or CostReport it made wrong: name it
        raise PluginError(f"{who} in {method}: {err.args[0]}") from err
    except NkigymError:
        raise
    except Exception as err:  # a plugin's bug: name it
        raise PluginError(f"{who} failed in {method}: {describe(err)}{where(err)}") from err


def _checked(who: str, result: Any, kind: type[R], expected: str) -> R:
    if not isinstance(result, kind):
        raise PluginError(f"{who} returned {describe_value(result)}, not {expected}")
    return result
