"""Attribute literals in program text and emitted kernels, non-finite floats included.

Python prints infinity and nan as ``inf`` and ``nan``, which are names, not literals.
They are written ``float("inf")``, ``float("-inf")`` and ``float("nan")`` instead,
which is valid Python (so an emitted NKI kernel runs) and which the text parser reads
as a literal without evaluating anything.

>>> format_literal(float("-inf")), format_literal(0.5), format_literal("add")
('float("-inf")', '0.5', '"add"')
>>> import ast
>>> read_float_call(ast.parse('float("nan")', mode="eval").body)
nan
"""

from __future__ import annotations

import ast
import math
from typing import Any

NON_FINITE = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf, "nan": math.nan}
"""The strings ``float("...")`` may hold in program text (case-insensitive)."""


def format_literal(value: Any) -> str:
    """The source text of an attribute value."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    return repr(value)


def read_float_call(expr: ast.expr) -> float | None:
    """The value of ``float("inf")`` / ``float("-inf")`` / ``float("nan")``, else None."""
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "float"
        and not expr.keywords
        and len(expr.args) == 1
        and isinstance(expr.args[0], ast.Constant)
        and isinstance(expr.args[0].value, str)
    ):
        return NON_FINITE.get(expr.args[0].value.strip().lower())
    return None
