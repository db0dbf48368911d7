"""Verification rule ``capacity``: every tensor fits the memory it lives in.

- An HBM tensor (a parameter or an output) holds at most the target's ``hbm_bytes``,
  and so do all of them together.
- An on-chip tile holds at most the target's bytes per partition in its free dims:
  ``psum_bytes_per_partition`` for a Tensor Engine result on a Neuron core (PSUM),
  ``sbuf_bytes_per_partition`` otherwise. Tiles carry no dtype; they count 4 bytes an
  element, as the ``limit`` rule does.

Sizes are Python ints, so a shape beyond int64 is refused here like any other. A
verdict depends only on the tensor's kind, shape and dtype, so it is cached by that key.

>>> from nkigym_graph.ir.targets import TRN2
>>> tensor_bytes((1000, 1000), "float16")
2000000
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from nkigym_graph.errors import VerificationError
from nkigym_graph.ir.dtypes import itemsize
from nkigym_graph.ir.statement import Statements
from nkigym_graph.ir.targets import Target
from nkigym_graph.ir.variables import PARAM, Variable

PSUM_ENGINE = "tensor"
"""On a Neuron core the results of the ops on this engine (``Op.engine``) live in PSUM."""


def tensor_bytes(shape: Sequence[int], dtype: str | None) -> int:
    """Bytes of a tensor of ``shape`` and ``dtype`` (exact, however large)."""
    return math.prod(shape) * itemsize(dtype)


def check_capacity(
    statements: Statements,
    variables: Mapping[str, Variable],
    target: Target,
    describe: Callable[[int], str],
    names: Iterable[str] | None = None,
) -> None:
    """Rule ``capacity`` for the variables ``names`` (default: all, and the HBM total)."""
    hbm_total = 0
    seen: set[tuple[Any, ...]] = set()
    for name in variables if names is None else names:
        info = variables.get(name)
        if info is None:
            continue
        psum = (
            not info.external
            and info.defined_by is not None
            and target.family == "neuron"
            and statements[info.defined_by].op.engine == PSUM_ENGINE
        )
        key = (info.external, psum, info.shape, info.dtype)
        if info.external:
            hbm_total += tensor_bytes(info.shape, info.dtype)
        if key in seen:
            continue
        problem = _problem(info, psum, target)
        if problem:
            where = describe(info.defined_by) if info.defined_by is not None else ""
            raise VerificationError("capacity", problem, where)
        seen.add(key)
    cap = target.hbm_bytes
    if names is None and cap is not None and hbm_total > cap:
        raise VerificationError(
            "capacity",
            f"parameters and outputs together need {hbm_total} bytes > {cap} bytes of HBM on {target.name}",
        )


def _problem(info: Variable, psum: bool, target: Target) -> str | None:
    what = f"{'parameter' if info.kind == PARAM else info.kind} {info.name!r} {info.shape}"
    if info.external:
        need = tensor_bytes(info.shape, info.dtype)
        cap = target.hbm_bytes
        if cap is not None and need > cap:
            return f"{what} ({info.dtype}) needs {need} bytes > {cap} bytes of HBM on {target.name}"
        return None
    need = tensor_bytes(info.shape[1:], info.dtype)
    buffer, cap = (
        ("PSUM", target.psum_bytes_per_partition) if psum else ("SBUF", target.sbuf_bytes_per_partition)
    )
    if need > cap:
        return f"{what} needs {need} bytes per partition > {cap} bytes of {buffer} on {target.name}"
    return None
