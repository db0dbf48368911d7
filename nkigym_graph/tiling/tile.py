"""``tile``: from a user's tensor function and its parameter shapes to a verified Program.

The function is traced once on symbolic tensors (its source is never read), its
dimensions are analysed (``analysis``) and the tiled statements are emitted
(``emit``); the Program is built, and so verified, once.

>>> from nkigym_graph.tiling.frontend import nc_matmul
>>> def tiled_matmul(a, b):
...     return nc_matmul(a, b)
>>> p = tile(tiled_matmul, {"a": (128, 128), "b": (128, 256)})
>>> len(p), p.statements_of("store")
(9, (4, 8))
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from nkigym_graph.errors import TilingError
from nkigym_graph.ir.dtypes import resolve_dtype
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Statement
from nkigym_graph.ir.targets import TRN2, Target
from nkigym_graph.ir.variables import Param
from nkigym_graph.tiling.arguments import MAX_STATEMENTS, check_limit, check_target, parameter_shapes
from nkigym_graph.tiling.dimensions import DimensionAnalysis, analyze
from nkigym_graph.tiling.emit import emit_statements
from nkigym_graph.tiling.errors import StatementLimitError
from nkigym_graph.tiling.limits import refuse, statement_bounds
from nkigym_graph.tiling.trace import Trace, TracedTensor
from nkigym_graph.tiling.user_call import call_traced

Shapes = Mapping[str, Sequence[int]] | Sequence[Sequence[int]]
"""Parameter shapes by name, or in parameter order."""

_FRESH = "tensor_"


class TiledParts(NamedTuple):
    """Everything ``Program(...)`` needs, plus the dimension analysis behind it."""

    name: str
    params: tuple[Param, ...]
    statements: list[Statement]
    returns: str
    target: Target
    dimensions: DimensionAnalysis

    def build(self) -> Program:
        """The verified Program."""
        return Program(self.name, self.params, self.statements, self.returns, target=self.target)


def tile(
    func: Callable[..., Any],
    shapes: Shapes,
    dtype: npt.DTypeLike = np.float32,
    target: Target | str = TRN2,
    *,
    max_statements: int = MAX_STATEMENTS,
    online: bool = False,
) -> Program:
    """Tile ``func`` for parameters of ``shapes`` on ``target``; the parameters and output
    have ``dtype`` (a name, alias such as ``"bf16"``, or numpy dtype). A program of more
    than ``max_statements`` statements is refused before it is built. With ``online``,
    a row maximum and the sums of the exponentials it shifts (softmax, attention) are
    computed in one pass over the row: a running maximum, rescaled sums
    (``nkigym_graph.tiling.online``)."""
    return tile_parts(func, shapes, dtype, target, max_statements=max_statements, online=online).build()


def tile_parts(
    func: Callable[..., Any],
    shapes: Shapes,
    dtype: npt.DTypeLike = np.float32,
    target: Target | str = TRN2,
    *,
    max_statements: int = MAX_STATEMENTS,
    online: bool = False,
) -> TiledParts:
    """``tile`` without building the Program (for timing the two apart)."""
    resolved = check_target(target)
    if not isinstance(online, bool):
        raise TilingError(f"online must be True or False, got {online!r}")
    dtype_name = resolve_dtype(dtype)
    limit = check_limit(max_statements)
    if not callable(func):
        raise TilingError(f"func must be a function, got {type(func).__name__}")
    name = getattr(func, "__name__", "")
    name = name if isinstance(name, str) and name.isidentifier() else "tiled"
    names = _parameter_names(func, name)
    param_shapes = parameter_shapes(shapes, names, name)
    trace = Trace()
    tensors = [trace.param(p, param_shapes[p]) for p in names]
    result = call_traced(func, tensors, name)
    output = _returned(result, trace, name)
    dims = analyze(trace, output, resolved)
    unused = [p for p in names if p not in dims.params]
    if unused:
        raise TilingError(
            f"{name}: parameter(s) {', '.join(map(repr, unused))} not used by the returned tensor"
        )
    lower, upper = statement_bounds(dims)
    if lower > limit:
        raise refuse(name, f"{lower:,}" if lower == upper else f"at least {lower:,}", limit)
    output_name = _output_name(names)
    reserved = {p for p in names if p.startswith(_FRESH)}
    try:
        step = resolved.limit("nc_matmul", "N") or resolved.partition_size
        statements = emit_statements(dims, output_name, dtype_name, reserved, limit, step if online else 0)
    except StatementLimitError:
        raise refuse(name, f"more than {limit:,}", limit) from None
    params = tuple(Param(p, param_shapes[p], dtype_name) for p in names)
    return TiledParts(name, params, statements, output_name, resolved, dims)


def _parameter_names(func: Callable[..., Any], name: str) -> list[str]:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as err:
        raise TilingError(f"cannot read the parameters of {func!r}: {err}") from None
    names = []
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
            raise TilingError(
                f"{name}: parameter {p} is not supported; every tensor must be a positional parameter"
            )
        names.append(p.name)
    if not names:
        raise TilingError(f"{name}: the function takes no tensor parameters")
    return names


def _returned(result: object, trace: Trace, name: str) -> TracedTensor:
    if isinstance(result, TracedTensor) and result.trace is trace:
        return result
    if result is None:
        problem = "returned None (missing `return`?)"
    elif isinstance(result, TracedTensor):
        problem = "returned a tensor traced for another function"
    else:
        problem = f"returned a value of type {type(result).__name__}"
    raise TilingError(f"{name}: {problem}; it must return one tensor computed from its parameters")


def _output_name(params: list[str]) -> str:
    name, i = "output", 0
    while name in params:
        name, i = f"output_{i}", i + 1
    return name
