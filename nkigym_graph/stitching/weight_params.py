"""Which parameters of a program are matmul weights, and which can share a stitched tensor.

A *weight* is a 2-D HBM parameter read only through loads whose tiles are read only
as ``nc_matmul``'s ``rhs`` (``[K, N]``). Weights are grouped by dtype, because a
stitched tensor has one dtype; a group of two or more is stitchable. A weight is left
out (with the reason recorded) when its width is not whole tiles of the target's
stitching tile, when its name cannot be part of a stitched name, or when it already is
a stitched tensor.

>>> from nkigym_graph import parse_program
>>> p = parse_program('''
... def f(x, w1, w2):
...     output = nkigym.ndarray((32, 64), dtype=np.float32)
...     tensor_0 = x[0:32, 0:32]
...     tensor_1 = w1[0:32, 0:32]
...     tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
...     output[0:32, 0:32] = tensor_2
...     tensor_3 = w2[0:32, 0:32]
...     tensor_4 = nkigym.nc_matmul(tensor_0, tensor_3)
...     output[0:32, 32:64] = tensor_4
...     return output
... ''')
>>> [[w.name for w in group] for group in find_weights(p).groups]
[['w1', 'w2']]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from nkigym_graph.ir.arguments import require_program
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.variables import Param
from nkigym_graph.stitching.errors import StitchError
from nkigym_graph.stitching.naming import parse_stitched_name, stitch_tile, stitchable_name

_RHS = 1
"""``nc_matmul``'s operand position of ``rhs`` ``[K, N]``."""


@dataclass(frozen=True)
class WeightParam:
    """A matmul weight parameter and the loads that read it."""

    name: str
    shape: tuple[int, int]
    dtype: str
    loads: tuple[int, ...]


@dataclass(frozen=True)
class WeightAnalysis:
    """The stitchable weight groups of a program and why the other parameters are not in one."""

    groups: tuple[tuple[WeightParam, ...], ...]
    """Each group: two or more weights of one dtype, in parameter order."""
    rejected: Mapping[str, str]
    """Parameter name -> why it is in no group."""
    tile: tuple[int, int]
    """The stitching tile on the program's target."""

    def explain(self) -> str:
        """One line per group and per left-out parameter."""
        lines = [
            f"stitchable ({group[0].dtype}): {', '.join(w.name for w in group)}" for group in self.groups
        ]
        lines += [f"{name}: {reason}" for name, reason in self.rejected.items()]
        return "\n".join(lines) if lines else "the program has no parameters"


def _not_a_weight(program: Program, param: Param) -> str | None:
    """Why ``param`` is not a matmul weight, or None if it is one."""
    if param.space != "hbm":
        return f"lives in {param.space}, not HBM"
    if len(param.shape) != 2:
        return f"is {len(param.shape)}-D; a matmul weight is 2-D [K, N]"
    loads = program.loads_of(param.name)
    if not loads:
        return "is never loaded"
    statements = program
    for load in loads:
        tile = statements[load].dst.var
        for node, position in program.consumers_of(tile):
            op = statements[node].op
            if op.name != "nc_matmul" or position != _RHS:
                role = op.operand_names[position]
                return (
                    f"its tile {tile} (statement {load}) is read as {op.name} {role} "
                    f"(statement {node}), not only as nc_matmul rhs"
                )
    return None


def _not_stitchable(param: Param, tile: tuple[int, int], target_name: str) -> str | None:
    """Why the weight ``param`` cannot take part in stitching, or None."""
    if parse_stitched_name(param.name) is not None:
        return "is already a stitched tensor"
    if not stitchable_name(param.name):
        return "has a name that cannot be part of a stitched name (letters/digits, single underscores)"
    width = param.shape[1]
    if width % tile[1]:
        return f"width {width} is not a multiple of the stitching tile width {tile[1]} on {target_name}"
    return None


def _group_reason(weight: WeightParam, by_dtype: Mapping[str, list[WeightParam]]) -> str:
    others = [
        f"{w.name} ({dtype})" for dtype, group in by_dtype.items() if dtype != weight.dtype for w in group
    ]
    reason = f"is the only stitchable {weight.dtype} weight; stitching needs two or more of one dtype"
    if others:
        reason += f" (weights of another dtype cannot share its tensor: {', '.join(others)})"
    return reason


def find_weights(program: Program) -> WeightAnalysis:
    """The program's stitchable weight groups (see the module docstring)."""
    require_program(program, "program", StitchError)
    tile = stitch_tile(program.target)
    rejected: dict[str, str] = {}
    by_dtype: dict[str, list[WeightParam]] = {}
    for param in program.params:
        reason = _not_a_weight(program, param) or _not_stitchable(param, tile, program.target.name)
        if reason is not None:
            rejected[param.name] = reason
            continue
        k, n = param.shape
        weight = WeightParam(param.name, (k, n), param.dtype, program.loads_of(param.name))
        by_dtype.setdefault(param.dtype, []).append(weight)
    groups = []
    for group in by_dtype.values():
        if len(group) >= 2:
            groups.append(tuple(group))
        else:
            rejected[group[0].name] = _group_reason(group[0], by_dtype)
    return WeightAnalysis(tuple(groups), MappingProxyType(rejected), tile)
