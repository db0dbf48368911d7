"""The op registry: op singletons by name. Plugins may register more ops."""

from __future__ import annotations

from nkigym_graph.errors import PluginError
from nkigym_graph.ir.arguments import require_type
from nkigym_graph.ir.ops.base import Op

_OPS: dict[str, Op] = {}


def register_op(op: Op) -> Op:
    """Add an op singleton; a second, different op under the same name is an error."""
    existing = _OPS.get(op.name)
    if existing is not None and existing is not op:
        raise PluginError(f"an op named {op.name!r} is already registered ({existing!r})")
    _OPS[op.name] = op
    return op


def get_op(name: str) -> Op:
    """The op singleton called ``name``."""
    require_type(name, str, "op", PluginError, "an op name")
    try:
        return _OPS[name]
    except KeyError:
        raise PluginError(f"unknown op {name!r}; known ops: {', '.join(sorted(_OPS))}") from None


def ops_printed_as(text_name: str) -> list[Op]:
    """The registered ops that print as ``nkigym.<text_name>(...)``, in registration order
    (``tensor_scalar``: the constant form, then the ``[P, 1]`` column form)."""
    return [op for op in _OPS.values() if op.text == text_name]


def all_ops() -> dict[str, Op]:
    """A copy of the registry."""
    return dict(_OPS)
