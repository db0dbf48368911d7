"""Transforms' own failures, named: the one place every analysis and rewrite goes through.

``Transform.__init_subclass__`` wraps the methods a transform defines (``analyze``,
``analysis``, ``reanalysis``, ``analyze_batch``, ``rewrite``, ``explain``), so whatever
calls them (``apply``, ``saturate``, ``search``, ``matches_of``) gets a ``TransformError``
naming the transform, the plugin that registered it and the failing line instead of a
raw ``ZeroDivisionError`` from inside a plugin. nkigym's own errors pass unchanged.
``analyze`` must moreover return a list (or tuple) of ``Match``: anything else is a
``TransformError`` naming the transform, not a failure further on.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from nkigym_graph.errors import NkigymError, TransformError
from nkigym_graph.foreign_errors import describe, where

GUARDED = ("analyze", "analysis", "reanalysis", "analyze_batch", "rewrite", "explain")

_plugins: dict[str, tuple[str, object]] = {}
"""Transform name -> the plugin that registered it and the instance it registered
(``record_plugins``)."""


def record_plugins(registered: Mapping[str, tuple[str, object]]) -> None:
    """Remember which plugin registered which transform instance, by name (the plugin
    registry tells this layer whenever it collects the transforms anew). A failure is
    credited to a plugin only for the instance that plugin registered, so another
    transform of the same name (given directly, or once the plugin is unregistered) is
    not."""
    _plugins.clear()
    _plugins.update(registered)


def guard_methods(cls: type) -> None:
    """Wrap the ``GUARDED`` methods ``cls`` itself defines."""
    for name in GUARDED:
        method = cls.__dict__.get(name)
        if inspect.isfunction(method) and not getattr(method, "_guarded", False):
            setattr(cls, name, _guarded(method, name))


def _guarded(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            result = method(self, *args, **kwargs)
        except NkigymError:
            raise
        except Exception as err:  # a plugin's bug: name it
            raise TransformError(
                f"transform {getattr(self, 'name', '?')!r} ({origin(self)}) failed in {name}: "
                f"{describe(err)}{where(err)}"
            ) from err
        if name == "analyze":
            _require_matches(self, result)
        return result

    call._guarded = True  # type: ignore[attr-defined]
    return call


def _require_matches(transform: Any, result: Any) -> None:
    from nkigym_graph.rewriting.transform import Match

    if isinstance(result, list | tuple):
        wrong = next((item for item in result if not isinstance(item, Match)), None)
        if wrong is None:
            return
        got = f"a {type(result).__name__} holding {type(wrong).__name__} {wrong!r:.60}"
    else:
        got = f"{type(result).__name__} {result!r:.60}"
    raise TransformError(
        f"transform {getattr(transform, 'name', '?')!r} ({origin(transform)}): analyze must return a "
        f"list of Match, got {got}"
    )


def origin(transform: object) -> str:
    """``plugin 'x', module m``: where ``transform`` comes from."""
    module = type(transform).__module__
    plugin, registered = _plugins.get(getattr(transform, "name", ""), (None, None))
    return f"plugin {plugin!r}, {module}" if plugin and registered is transform else module
