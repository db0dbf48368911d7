"""The one registry of what plugins contribute: transforms, backends, cost models and
targets, each by name.

Registrations are collected from the hooks on first use and again after a plugin is
registered or unregistered at run time, plugin by plugin in registration order (the
built-ins first, so a built-in is found before a third party's contribution to the
same target family). Each value is checked as it is collected: what a hook raises or
returns that is not a list of what it registers is a ``PluginError`` naming the plugin
and the hook, and so is a name registered twice (naming both plugins) or a target name
that clashes with a built-in one. ``get_target`` finds a built-in target or one a plugin
registered, by name in any case.

>>> {"data_reuse", "dead_code"} <= set(registered_transforms())
True

>>> get_target("trn2").name
'trn2'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from nkigym_graph.errors import PluginError
from nkigym_graph.foreign_errors import describe, where
from nkigym_graph.ir.arguments import describe as describe_value
from nkigym_graph.ir.arguments import require_type
from nkigym_graph.ir.targets import BUILTIN_TARGETS, Target, resolve_target
from nkigym_graph.plugin.manager import generation, get_plugin_manager
from nkigym_graph.rewriting.transform import Transform
from nkigym_graph.rewriting.transform_guard import record_plugins

if TYPE_CHECKING:
    from nkigym_graph.plugin.protocols import Backend, CostModel

T = TypeVar("T")

TRANSFORMS_HOOK = "nkigym_graph_register_transforms"
BACKENDS_HOOK = "nkigym_graph_register_backends"
COST_MODELS_HOOK = "nkigym_graph_register_cost_models"
TARGETS_HOOK = "nkigym_graph_register_targets"

TRANSFORM_API = tuple(sorted(a for a in vars(Transform) if not a.startswith("_")))
"""What a registered transform has, as a ``Transform`` subclass does."""


class _Refused(Exception):
    """Why one value a hook returned cannot be registered (``_collect`` names the plugin)."""


class _Collected(NamedTuple):
    """One hook's registrations: the plugin generation they were collected at, the
    values by name, and each name's plugin."""

    generation: int
    values: Mapping[str, Any]
    plugins: Mapping[str, str]


_collected: dict[str, _Collected] = {}


def _collect(
    hook: str,
    make: Callable[[Any], tuple[str, T]],
    collected: Callable[[Mapping[str, str]], None] | None = None,
) -> Mapping[str, T]:
    """What every plugin's ``hook`` returned, each item ``make``-d into ``(name,
    value)``; ``collected`` is told each name's plugin whenever the hook is collected anew."""
    known = _collected.get(hook)
    if known is not None and known.generation == generation():
        return known.values
    found: dict[str, T] = {}
    origin: dict[str, str] = {}
    try:
        for plugin, items in _returned(hook):
            for item in items:
                name, value = _made(make, item, hook, plugin)
                if name in origin:
                    raise PluginError(f"{hook}: {name!r} is registered by {_both(origin[name], plugin)}")
                found[name], origin[name] = value, plugin
    except PluginError as err:  # collected on every use: say how to get going again
        raise PluginError(
            f"{err} (every lookup of {hook.removeprefix('nkigym_graph_register_')} fails until the plugin "
            "is fixed or removed: nkigym_graph.unregister_plugin)"
        ) from (err.__cause__ or err)
    registered = MappingProxyType(found)
    _collected[hook] = _Collected(generation(), registered, MappingProxyType(origin))
    if collected is not None:
        collected(origin)
    return registered


def _returned(hook: str) -> Iterator[tuple[str, Sequence[Any]]]:
    """``(plugin name, the list its ``hook`` returned)``, in registration order."""
    pm = get_plugin_manager()
    order = {name: index for index, (name, _) in enumerate(pm.list_name_plugin())}
    impls = sorted(getattr(pm.hook, hook).get_hookimpls(), key=lambda impl: order[impl.plugin_name])
    for impl in impls:
        try:
            returned = impl.function()
        except Exception as err:  # a plugin's bug: name it
            raise PluginError(
                f"{hook} of plugin {impl.plugin_name!r} failed: {describe(err)}{where(err)}"
            ) from err
        if returned is not None and not isinstance(returned, list | tuple):
            raise PluginError(
                f"{hook} of plugin {impl.plugin_name!r} must return a list, got {describe_value(returned)}"
            )
        yield impl.plugin_name, returned or ()


def _both(first: str, second: str) -> str:
    return f"plugin {first!r} twice" if first == second else f"both {first!r} and {second!r}"


def _made(make: Callable[[Any], tuple[str, T]], item: Any, hook: str, plugin: str) -> tuple[str, T]:
    try:
        return make(item)
    except _Refused as err:
        raise PluginError(f"{hook} of plugin {plugin!r}: {err}") from err.__cause__


def plugin_of(hook: str, name: str) -> str | None:
    """The plugin whose ``hook`` registered ``name`` (None if none did)."""
    known = _collected.get(hook)
    return known.plugins.get(name) if known is not None else None


def _instance(item: Any) -> Any:
    """A class instantiated without arguments (hookspecs), or an instance as given."""
    if not isinstance(item, type):
        return item
    try:
        return item()
    except Exception as err:
        raise _Refused(f"{item.__qualname__}() failed: {describe(err)}{where(err)}") from err


def _name(value: Any) -> str:
    """``value.name``: a non-empty str without surrounding spaces."""
    name = getattr(value, "name", None)
    if not isinstance(name, str) or not name or name != name.strip():
        raise _Refused(f"{describe_value(value)} needs a name (a non-empty str), got {describe_value(name)}")
    return name


def _methods(value: Any, *methods: str) -> None:
    missing = [m for m in methods if not callable(getattr(value, m, None))]
    if missing:
        raise _Refused(f"{describe_value(value)} has no {' or '.join(missing)} method")


def _transform(item: Any) -> tuple[str, Transform]:
    transform = _instance(item)
    if not isinstance(transform, Transform):
        missing = ", ".join(a for a in TRANSFORM_API if not hasattr(transform, a)) or "none"
        raise _Refused(
            f"{describe_value(transform)} is not a nkigym_graph.Transform (subclass Transform or "
            f"PatternTransform; missing: {missing})"
        )
    return _name(transform), transform


def _backend(item: Any) -> tuple[str, Backend]:
    backend = _instance(item)
    _methods(backend, "emit")
    return _name(backend), backend


def _cost_model(item: Any) -> tuple[str, CostModel]:
    model = _instance(item)
    _methods(model, "estimate")
    families = getattr(model, "families", ())
    if not isinstance(families, tuple) or not all(isinstance(f, str) for f in families):
        got = describe_value(families)
        raise _Refused(f"{describe_value(model)}: families must be a tuple of str, got {got}")
    return _name(model), model


def _target(item: Any) -> tuple[str, Target]:
    if not isinstance(item, Target):
        raise _Refused(f"{describe_value(item)} is not a nkigym_graph.Target")
    key = _name(item).lower()
    if key in BUILTIN_TARGETS:
        raise _Refused(f"target {item.name!r} clashes with the built-in target {key!r} (nkigym_graph)")
    return key, item


def registered_transforms() -> Mapping[str, Transform]:
    """Transform instances by name."""
    return _collect(TRANSFORMS_HOOK, _transform, _tell_the_guard)


def _tell_the_guard(origin: Mapping[str, str]) -> None:
    """Transforms' failures name their plugin (``rewriting.transform_guard``; called once
    the transforms are collected)."""
    transforms = _collected[TRANSFORMS_HOOK].values
    record_plugins({name: (plugin, transforms[name]) for name, plugin in origin.items()})


def registered_backends() -> Mapping[str, Backend]:
    """Backend instances by name."""
    return _collect(BACKENDS_HOOK, _backend)


def registered_cost_models() -> Mapping[str, CostModel]:
    """Cost-model instances by name, in registration order: the built-ins first, so the
    first model naming a target family in its ``families`` is the built-in one."""
    return _collect(COST_MODELS_HOOK, _cost_model)


def registered_targets() -> Mapping[str, Target]:
    """Targets contributed by plugins, by lower-case name (found in any case, as the
    built-in ones are)."""
    return _collect(TARGETS_HOOK, _target)


def lookup(kind: str, registry: Mapping[str, T], name: str) -> T:
    """``registry[name]`` or a PluginError listing what exists."""
    require_type(name, str, kind, PluginError, f"a {kind} name")
    try:
        return registry[name]
    except KeyError:
        known = ", ".join(sorted(registry)) or "none"
        raise PluginError(f"unknown {kind} {name!r}; registered {kind}s: {known}") from None


def get_target(target: str | Target) -> Target:
    """Resolve a target by name (a built-in one, then one a plugin registered, in any
    case) or pass one through. Every lookup by name collects the plugins' targets, so
    one clashing with a built-in name is refused rather than shadowed."""
    plugins = registered_targets() if isinstance(target, str) else {}
    return resolve_target(target, lambda: plugins)
