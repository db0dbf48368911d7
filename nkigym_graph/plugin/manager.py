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
from importlib import metadata
from types import ModuleType
from typing import TYPE_CHECKING

import pluggy

from nkigym_graph.errors import PluginError
from nkigym_graph.foreign_errors import describe, where
from nkigym_graph.ir.arguments import describe as describe_value
from nkigym_graph.ir.arguments import require_type
from nkigym_graph.plugin import hookspecs
from nkigym_graph.plugin.hookspecs import PROJECT

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

AUTOLOAD_ENV = "NKIGYM_GRAPH_DISABLE_PLUGIN_AUTOLOAD"
BUILTIN_PACKAGE = "nkigym_graph_plugins"

_manager: pluggy.PluginManager | None = None
_origins: dict[str, str] = {}
"""Plugin name -> the distribution (and version) whose entry point provided it."""
_generation = 0
"""Counts the plugins registered and unregistered at run time (``generation``)."""


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
    _changed()


def unregister_plugin(plugin: ModuleType | object) -> None:
    """Undo ``register_plugin``."""
    pm = get_plugin_manager()
    if not pm.is_registered(plugin):
        raise PluginError(f"plugin is not registered: {describe_value(plugin)}")
    pm.unregister(plugin)
    _changed()


def _changed() -> None:
    global _generation
    _generation += 1


def generation() -> int:
    """A number that changes whenever a plugin is registered or unregistered at run
    time: what the registry's collected registrations are valid for."""
    return _generation


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


def notify_rewritten(transform_name: str, before: Program, after: Program) -> None:
    """Fire the ``nkigym_graph_program_rewritten`` hook."""
    get_plugin_manager().hook.nkigym_graph_program_rewritten(
        transform_name=transform_name, before=before, after=after
    )
