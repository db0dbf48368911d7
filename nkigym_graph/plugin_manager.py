"""The plugin manager: one per process, loaded on first use.

Order: the hook specifications, the built-in plugins (``nkigym_graph_plugins``,
declared in this distribution's own entry points), then every other module in the
``nkigym_graph`` entry-point group, unless ``NKIGYM_GRAPH_DISABLE_PLUGIN_AUTOLOAD`` is
set (to any non-empty value). ``check_pending()`` then rejects hook implementations
without a specification (a misspelt hook name). A name registered twice is an error
that names both plugins.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from types import MappingProxyType, ModuleType
from typing import Any, TypeVar

import pluggy

from nkigym_graph import hookspecs
from nkigym_graph.errors import PluginError
from nkigym_graph.foreign_errors import describe, where
from nkigym_graph.hookspecs import PROJECT
from nkigym_graph.ir.arguments import describe as describe_value
from nkigym_graph.ir.arguments import require_type

AUTOLOAD_ENV = "NKIGYM_GRAPH_DISABLE_PLUGIN_AUTOLOAD"
BUILTIN_PACKAGE = "nkigym_graph_plugins"

hookimpl = pluggy.HookimplMarker(PROJECT)

_manager: pluggy.PluginManager | None = None
_registries: dict[str, Mapping[str, Any]] = {}
_origins: dict[str, str] = {}
"""Plugin name -> the distribution (and version) whose entry point provided it."""
_providers: dict[tuple[str, str], str] = {}
"""(hook, registered name) -> the plugin that provided it."""


def _register_entry_point(pm: pluggy.PluginManager, ep: metadata.EntryPoint) -> None:
    try:
        plugin = ep.load()
    except Exception as err:  # a broken third-party package: name it
        raise PluginError(
            f"plugin {ep.name!r} (entry point {ep.value}) failed to load: {describe(err)}{where(err)}"
        ) from err
    pm.register(plugin, name=ep.name)
    dist = ep.dist
    _origins[ep.name] = f"{dist.name} {dist.version}" if dist is not None else "entry point"


T = TypeVar("T")


def _builtin_entry_points() -> list[metadata.EntryPoint]:
    return [ep for ep in metadata.entry_points(group=PROJECT) if ep.value.startswith(BUILTIN_PACKAGE)]


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager (created and loaded on first call)."""
    global _manager
    if _manager is None:
        pm = pluggy.PluginManager(PROJECT)
        pm.add_hookspecs(hookspecs)
        for ep in _builtin_entry_points():
            _register_entry_point(pm, ep)
        if not os.environ.get(AUTOLOAD_ENV):
            for ep in metadata.entry_points(group=PROJECT):
                if pm.get_plugin(ep.name) is None and not ep.value.startswith(BUILTIN_PACKAGE):
                    _register_entry_point(pm, ep)
        pm.check_pending()
        _manager = pm
    return _manager


def register_plugin(plugin: ModuleType | object, name: str | None = None) -> None:
    """Register a plugin object or module at run time (tests, notebooks, scripts)."""
    pm = get_plugin_manager()
    if name is not None:
        require_type(name, str, "name", PluginError, "a str or None")
    hooks = [attr for attr in dir(plugin) if pm.parse_hookimpl_opts(plugin, attr) is not None]
    if not hooks:
        raise PluginError(f"plugin must have @nkigym_graph.hookimpl functions, got {describe_value(plugin)}")
    try:
        pm.register(plugin, name=name)
    except ValueError as err:  # pluggy: already registered, or the name is taken
        raise PluginError(f"plugin cannot be registered: {str(err).splitlines()[0]}") from None
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as err:
        pm.unregister(plugin)
        raise PluginError(f"plugin cannot be registered: {err}") from None
    _registries.clear()


def unregister_plugin(plugin: ModuleType | object) -> None:
    """Undo ``register_plugin``."""
    pm = get_plugin_manager()
    if not pm.is_registered(plugin):
        raise PluginError(f"plugin is not registered: {describe_value(plugin)}")
    pm.unregister(plugin)
    _registries.clear()


def plugin_sources() -> list[tuple[str, str]]:
    """``(plugin name, where it came from)`` for every loaded plugin."""
    pm = get_plugin_manager()
    out = []
    for name, plugin in pm.list_name_plugin():
        if name is None:
            continue
        where = _origins.get(name, "registered at run time")
        module = getattr(plugin, "__name__", type(plugin).__name__)
        out.append((name, f"{module} ({where})"))
    if not any(True for _ in _builtin_entry_points()):
        out.append(("<none>", f"{BUILTIN_PACKAGE} entry points missing: reinstall the package"))
    return out


def _collect(hook: str, make: Callable[[Any], T], key: Callable[[T], str]) -> Mapping[str, T]:
    pm = get_plugin_manager()
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
    _providers.update({(hook, name): plugin for name, plugin in origin.items()})
    return MappingProxyType(found)


def provider(hook: str, name: str) -> str | None:
    """The plugin whose ``hook`` registered ``name`` (None: not registered through it)."""
    return _providers.get((hook, name))


def _registry(hook: str, make: Callable[[Any], T], key: Callable[[T], str]) -> Mapping[str, T]:
    if hook not in _registries:
        _registries[hook] = _collect(hook, make, key)
    return _registries[hook]


def _instance(cls: Any) -> Any:
    return cls() if isinstance(cls, type) else cls


def registered_transforms() -> Mapping[str, Any]:
    """Transform instances by name."""
    return _registry("nkigym_graph_register_transforms", _instance, lambda t: t.name)


def registered_backends() -> Mapping[str, Any]:
    """Backend instances by name."""
    return _registry("nkigym_graph_register_backends", _instance, lambda b: b.name)


def registered_cost_models() -> Mapping[str, Any]:
    """Cost-model instances by name."""
    return _registry("nkigym_graph_register_cost_models", _instance, lambda c: c.name)


def registered_targets() -> Mapping[str, Any]:
    """Targets contributed by plugins, by name."""
    return _registry("nkigym_graph_register_targets", lambda t: t, lambda t: t.name)


def lookup(kind: str, registry: Mapping[str, T], name: str) -> T:
    """``registry[name]`` or a PluginError listing what exists."""
    require_type(name, str, kind, PluginError, f"a {kind} name")
    try:
        return registry[name]
    except KeyError:
        known = ", ".join(sorted(registry)) or "none"
        raise PluginError(f"unknown {kind} {name!r}; registered {kind}s: {known}") from None


def notify_rewritten(transform_name: str, before: object, after: object) -> None:
    """Fire the ``nkigym_graph_program_rewritten`` hook."""
    get_plugin_manager().hook.nkigym_graph_program_rewritten(
        transform_name=transform_name, before=before, after=after
    )


def names(items: Iterable[str]) -> str:
    """Comma-separated sorted names (for messages)."""
    return ", ".join(sorted(items))
