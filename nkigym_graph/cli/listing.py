"""What ``nkigym-graph ops`` prints: the op functions a user writes, and the named
functions each one's ``op=`` accepts (taken from the ops themselves)."""

from __future__ import annotations

import inspect

from nkigym_graph.ir.literals import format_literal
from nkigym_graph.ir.ops import ACTIVATION, AFFINE_SELECT, TENSOR_REDUCE, TENSOR_SCALAR, TENSOR_TENSOR
from nkigym_graph.tiling import frontend

FUNCTIONS = (
    "nc_matmul",
    "nc_transpose",
    "activation",
    "tensor_tensor",
    "tensor_scalar",
    "tensor_reduce",
    "affine_select",
)
_CHOICES = {
    "activation": ACTIVATION,
    "tensor_tensor": TENSOR_TENSOR,
    "tensor_scalar": TENSOR_SCALAR,
    "tensor_reduce": TENSOR_REDUCE,
    "affine_select": AFFINE_SELECT,
}


def op_lines() -> list[str]:
    """One line per op function (signature and summary), then one per ``op=`` choice list."""
    lines = []
    for name in FUNCTIONS:
        func = getattr(frontend, name)
        summary = (inspect.getdoc(func) or "").splitlines()[0].replace("``", "")
        lines.append(f"nkigym.{name}({_parameters(func)})".ljust(58) + " " + summary)
    lines.append("")
    for name, op in _CHOICES.items():
        for attr, choices in op.attr_choices.items():
            lines.append(f"{name} {attr}=: {', '.join(sorted(choices))}")
    return lines


def _parameters(func: object) -> str:
    parts = []
    for p in inspect.signature(func).parameters.values():  # type: ignore[arg-type]
        if p.default is p.empty:
            parts.append(p.name)
        else:
            parts.append(
                f'{p.name}="{p.default}"'
                if isinstance(p.default, str)
                else f"{p.name}={format_literal(p.default)}"
            )
    return ", ".join(parts)
