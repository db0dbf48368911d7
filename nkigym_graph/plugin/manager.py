"""The plugin manager: one per process, loaded on first use.

Order: the hook specifications, the built-in plugins (``nkigym_graph_plugins``,
declared in this distribution's own entry points), then every other module in the
``nkigym_graph`` entry-point group, unless ``NKIGYM_GRAPH_DISABLE_PLUGIN_AUTOLOAD`` is
set (to any non-empty value). ``check_pending()`` then rejects hook implementations
without a specification (a misspelt hook name). A plugin whose hooks take arguments
their specification does not pass, or that fails to load, is a ``PluginError`` naming it.
A plugin registered at run time without a name is named after its module or class.

``notify_rewritten`` calls each observer (``nkigym_graph_program_rewritten``) in turn:
one that raises is an ``ObserverError`` naming its plugin, not the transform's failure.
"""

from __future__ import annotations

import os
from importlib import metadata
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from nkigym_graph.errors import PluginError
from nkigym_graph.foreign_errors import describe, where
from nkigym_graph.ir.arguments import describe as describe_value
from nkigym_graph.ir.arguments import require_type
from nkigym_graph.plugin import hookspecs
from nkigym_graph.plugin.hookspecs import PROJECT

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

REWRITTEN_HOOK = "nkigym_graph_program_rewritten"

AUTOLOAD_ENV = "NKIGYM_GRAPH_DISABLE_PLUGIN_AUTOLOAD"
BUILTIN_PACKAGE = "nkigym_graph_plugins"

_manager: pluggy.PluginManager | None = None
_origins: dict[str, str] = {}
"""Plugin name -> the distribution (and version) whose entry point provided it."""
_generation = 0
"""Counts the plugins registered and unregistered at run time (``generation``)."""


class ObserverError(PluginError):
    """A ``nkigym_graph_program_rewritten`` implementation (an observer) that raised."""


def _register_entry_point(pm: pluggy.PluginManager, ep: metadata.EntryPoint) -> None:
    try:
        plugin = ep.load()
    except Exception as err:  # a broken third-party package: name it
        raise PluginError(
            f"plugin {ep.name!r} (entry point {ep.value}) failed to load: {describe(err)}{where(err)}"
        ) from err
    _register(pm, plugin, ep.name)
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
        _check_pending(pm)
        _manager = pm
    return _manager


def register_plugin(plugin: ModuleType | object, name: str | None = None) -> None:
    """Register a plugin object or module at run time (tests, notebooks, scripts); its
    name defaults to its module's or class's name."""
    pm = get_plugin_manager()
    if name is not None:
        require_type(name, str, "name", PluginError, "a str or None")
    hooks = [attr for attr in dir(plugin) if pm.parse_hookimpl_opts(plugin, attr) is not None]
    if not hooks:
        raise PluginError(f"plugin must have @nkigym_graph.hookimpl functions, got {describe_value(plugin)}")
    if pm.is_registered(plugin):
        known = pm.get_name(plugin)
        raise PluginError(f"plugin cannot be registered: Plugin already registered as {known!r}")
    _register(pm, plugin, name or _default_name(pm, plugin))
    try:
        _check_pending(pm)
    except PluginError:
        pm.unregister(plugin)
        raise
    _changed()


def _register(pm: pluggy.PluginManager, plugin: object, name: str) -> None:
    """``pm.register``, its refusals (which name the plugin) a ``PluginError``."""
    try:
        pm.register(plugin, name=name)
    except ValueError as err:  # pluggy: the name is taken
        raise PluginError(f"plugin cannot be registered: {str(err).splitlines()[0]}") from None
    except pluggy.PluginValidationError as err:  # a hook taking arguments its specification lacks
        raise PluginError(f"plugin cannot be registered: {'; '.join(str(err).splitlines())}") from None


def _check_pending(pm: pluggy.PluginManager) -> None:
    """``pm.check_pending()``: a hook without a specification (a misspelt name) is refused."""
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as err:
        raise PluginError(f"plugin cannot be registered: {err}") from None


def _default_name(pm: pluggy.PluginManager, plugin: object) -> str:
    """The module's or class's name, numbered when taken (``Recorder``, ``Recorder-2``)."""
    base = getattr(plugin, "__name__", None) or type(plugin).__name__
    name, count = base, 1
    while pm.has_plugin(name):
        count += 1
        name = f"{base}-{count}"
    return name


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
    """Call every ``nkigym_graph_program_rewritten`` implementation, in pluggy's order
    (the last registered first); one that raises is an ``ObserverError`` naming it."""
    values = {"transform_name": transform_name, "before": before, "after": after}
    hook = getattr(get_plugin_manager().hook, REWRITTEN_HOOK)
    for impl in reversed(hook.get_hookimpls()):
        _observe(impl, values)


def _observe(impl: pluggy.HookImpl, values: dict[str, Any]) -> None:
    """One observer's call (a plain function: a wrapper has nothing to wrap here)."""
    culprit = f"observer plugin {impl.plugin_name!r} ({REWRITTEN_HOOK})"
    if impl.wrapper or impl.hookwrapper:
        raise ObserverError(f"{culprit} is a wrapper; an observer is a plain @nkigym_graph.hookimpl")
    try:
        impl.function(*(values[arg] for arg in impl.argnames))
    except Exception as err:  # the observer's bug, not the rewrite's: name it
        raise ObserverError(
            f"{culprit} failed after a rewrite by {values['transform_name']!r}: {describe(err)}{where(err)}"
        ) from err
