"""A pattern's op and attribute constraints, checked when the pattern is built: a
misspelt op, attribute or choice is an error at the line that wrote it, not a pattern
that silently matches nothing.

>>> checked_op("Pattern", "activation", {"op": "relu"}).name
'activation'
>>> checked_op("Pattern", "activaton", {})
Traceback (most recent call last):
...
nkigym_graph.errors.TransformError: Pattern('activaton'): unknown op; known ops: activation, ...
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from nkigym_graph.errors import TransformError
from nkigym_graph.ir.ops.base import Op
from nkigym_graph.ir.ops.registry import all_ops


def checked_op(kind: str, op_name: str | None, attrs: Mapping[str, Any]) -> Op | None:
    """The op called ``op_name`` (None: any op), once it is known to exist and ``attrs``
    to name its attributes with values it accepts (a predicate is not checked)."""
    if op_name is None:
        return None
    if not isinstance(op_name, str):
        raise TransformError(f"{kind}: the op must be an op name or None, got {op_name!r}")
    known = all_ops()
    op = known.get(op_name)
    if op is None:
        raise TransformError(f"{kind}({op_name!r}): unknown op; known ops: {', '.join(sorted(known))}")
    accepted = (*op.positional_attrs, *op.keyword_attrs)
    for name, wanted in attrs.items():
        if name not in accepted:
            raise TransformError(
                f"{kind}({op_name!r}): {op_name} has no attribute {name!r} (its attributes: "
                f"{', '.join(accepted) or 'none'})"
            )
        choices = op.attr_choices.get(name)
        if (
            choices is not None
            and not callable(wanted)
            and (not isinstance(wanted, Hashable) or wanted not in choices)
        ):
            raise TransformError(f"{kind}({op_name!r}): {name}={wanted!r} is not one of {sorted(choices)}")
    return op
