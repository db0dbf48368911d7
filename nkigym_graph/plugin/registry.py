"""The one registry of what plugins contribute: transforms, backends, cost models and
targets, each by name.

Registrations are collected from the hooks on first use and again after a plugin is
registered or unregistered at run time. A name registered by two plugins is an error
naming both. ``get_target`` finds a built-in target or one a plugin registered.

>>> {"data_reuse", "dead_code"} <= set(registered_transforms())
True

>>> get_target("trn2").name
'trn2'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from nkigym_graph.errors import PluginError
from nkigym_graph.ir.arguments import require_type
from nkigym_graph.ir.targets import Target, resolve_target
from nkigym_graph.plugin.manager import generation, get_plugin_manager
from nkigym_graph.rewriting.transform_guard import record_plugin

if TYPE_CHECKING:
    from nkigym_graph.plugin.protocols import Backend, CostModel
    from nkigym_graph.rewriting.transform import Transform

T = TypeVar("T")

TRANSFORMS_HOOK = "nkigym_graph_register_transforms"

_collected: dict[str, tuple[int, Mapping[str, Any]]] = {}
"""Hook -> (the plugin generation it was collected at, registered values by name)."""


def _collect(
    hook: str,
    make: Callable[[Any], T],
    key: Callable[[T], str],
    collected: Callable[[Mapping[str, str]], None] | None = None,
) -> Mapping[str, T]:
    """What every plugin's ``hook`` returned, ``make``-d and keyed by ``key``;
    ``collected`` is told each name's plugin whenever the hook is collected anew."""
    pm = get_plugin_manager()
    now = generation()
    known = _collected.get(hook)
    if known is not None and known[0] == now:
        return known[1]
    found: dict[str, T] = {}
    origin: dict[str, str] = {}
    caller = getattr(pm.hook, hook)
    for impl in reversed(caller.get_hookimpls()):  # registration order
        for item in impl.function() or ():
            value = make(item)
            name = key(value)
            if name in found:
                raise PluginError(
                    f"{hook}: {name!r} is registered by both {origin[name]!r} and {impl.plugin_name!r}"
                )
            found[name] = value
            origin[name] = impl.plugin_name
    registered = MappingProxyType(found)
    _collected[hook] = (now, registered)
    if collected is not None:
        collected(origin)
    return registered


def _instance(cls: Any) -> Any:
    return cls() if isinstance(cls, type) else cls


def registered_transforms() -> Mapping[str, Transform]:
    """Transform instances by name."""
    return _collect(TRANSFORMS_HOOK, _instance, lambda t: t.name, _tell_the_guard)


def _tell_the_guard(origin: Mapping[str, str]) -> None:
    """Transforms' failures name their plugin (``rewriting.transform_guard``)."""
    for name, plugin in origin.items():
        record_plugin(name, plugin)


def registered_backends() -> Mapping[str, Backend]:
    """Backend instances by name."""
    return _collect("nkigym_graph_register_backends", _instance, lambda b: b.name)


def registered_cost_models() -> Mapping[str, CostModel]:
    """Cost-model instances by name."""
    return _collect("nkigym_graph_register_cost_models", _instance, lambda c: c.name)


def registered_targets() -> Mapping[str, Target]:
    """Targets contributed by plugins, by name."""
    return _collect("nkigym_graph_register_targets", lambda t: t, lambda t: t.name)


def lookup(kind: str, registry: Mapping[str, T], name: str) -> T:
    """``registry[name]`` or a PluginError listing what exists."""
    require_type(name, str, kind, PluginError, f"a {kind} name")
    try:
        return registry[name]
    except KeyError:
        known = ", ".join(sorted(registry)) or "none"
        raise PluginError(f"unknown {kind} {name!r}; registered {kind}s: {known}") from None


def get_target(target: str | Target) -> Target:
    """Resolve a target by name (a built-in one, then one a plugin registered) or pass
    one through."""
    return resolve_target(target, registered_targets)
