"""Running a program in numpy: the numeric ground truth every transform is checked against.

Intermediates are computed in float64 (or ``dtype=``); outputs take the dtype their
``nkigym.ndarray`` declares unless ``dtype=`` overrides it. Outputs start as zeros.

>>> import numpy as np
>>> from nkigym_graph import parse_program
>>> p = parse_program('''
... def f(a, b):
...     output = nkigym.ndarray((128, 128), dtype=np.float64)
...     tensor_0 = a[0:128, 0:128]
...     tensor_1 = b[0:128, 0:128]
...     tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
...     output[0:128, 0:128] = tensor_2
...     return output
... ''')
>>> a, b = np.eye(128), np.full((128, 128), 2.0)
>>> float(interpret(p, a=a, b=b).sum())
32768.0
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from nkigym_graph.errors import NkigymError, ResourceLimitError
from nkigym_graph.ir.arguments import describe, require_program
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.slices import Slices
from nkigym_graph.ir.variables import INTERMEDIATE
from nkigym_graph.numeric.blas import one_blas_thread
from nkigym_graph.numeric.memory_limit import DEFAULT_MAX_BYTES, check_memory, dropped_after


def _index(slices: Slices, cache: dict[Slices, tuple[slice, ...]]) -> tuple[slice, ...]:
    idx = cache.get(slices)
    if idx is None:
        idx = cache[slices] = tuple(slice(start, stop) for start, stop in slices)
    return idx


def run(
    program: Program,
    arrays: Mapping[str, Any],
    dtype: npt.DTypeLike | None = None,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    round_to: np.dtype | None = None,
    keep: Collection[str] | None = None,
) -> dict[str, np.ndarray]:
    """Execute ``program`` and return every variable's final value, or with ``keep`` the
    parameters', the outputs' and those of the variables in ``keep``: every other tile is
    dropped after the last statement that mentions it, so a large program runs in the
    memory of its live tiles (``memory_limit.live_ranges``). With ``round_to``, every
    result a statement writes is rounded to that dtype, as a kernel's tiles hold them,
    except into a variable that statements accumulate into (a partial sum, which a
    kernel keeps in fp32 PSUM)."""
    compute = np.dtype(dtype) if dtype is not None else np.dtype(np.float64)
    check_memory(program, compute, dtype is not None, max_bytes, "interpret", keep)
    dropped = dropped_after(program, keep)
    env: dict[str, np.ndarray] = {}
    for param in program.params:
        if param.name not in arrays:
            raise NkigymError(f"interpret: missing input {param.name!r} (shape {param.shape})")
        value = np.asarray(arrays[param.name])
        if value.shape != tuple(param.shape):
            raise NkigymError(
                f"interpret: input {param.name!r} has shape {value.shape}, expected {param.shape}"
            )
        env[param.name] = _real(param.name, value).astype(compute, copy=False)
    unexpected = set(arrays) - {p.name for p in program.params}
    if unexpected:
        raise NkigymError(f"interpret: unexpected input(s) {sorted(unexpected)}")
    for out in program.outputs:
        env[out.name] = np.zeros(out.shape, dtype=compute if dtype is not None else out.dtype)
    variables = program.variables
    cache: dict[Slices, tuple[slice, ...]] = {}
    accumulated = {stmt.dst.var for stmt in program.statements if stmt.accumulate} if round_to else set()
    for position, stmt in enumerate(program.statements):
        op = stmt.op
        attrs = stmt.attr_map
        var, slices = stmt.dst
        if op.name == "alloc":
            env[var] = np.zeros(variables[var].shape, dtype=compute if dtype is not None else attrs["dtype"])
            continue
        inputs = [env[v][_index(s, cache)] for v, s in (stmt.operands[p] for p in op.read_positions)]
        result = op.compute(inputs, attrs)
        if round_to is not None and var not in accumulated:
            with np.errstate(over="ignore"):  # beyond the dtype's range is inf, as in a tile
                result = np.asarray(result).astype(round_to).astype(compute)
        target = env.get(var)
        if target is None:
            info = variables[var]
            target = env[var] = np.zeros(
                info.shape, dtype=compute if info.kind == INTERMEDIATE else info.dtype
            )
        region = target[_index(slices, cache)]
        if stmt.accumulate:
            region += result
        else:
            region[...] = result
        for done in dropped.get(position, ()):
            env.pop(done, None)
    return env


_ML_FLOATS = frozenset(
    np.dtype(kind)
    for name, kind in vars(ml_dtypes).items()
    if name.startswith(("bfloat", "float")) and isinstance(kind, type)
)
"""``ml_dtypes``' floats (bfloat16, float8_e4m3, ...): numpy sees most as void types."""


def _real(name: str, value: np.ndarray) -> np.ndarray:
    """``value`` unless its dtype is not a real number type (bool, integer or float,
    ``ml_dtypes`` floats included); then an error naming the parameter and the dtype."""
    dtype = value.dtype
    if dtype.kind in "biuf" or dtype in _ML_FLOATS:
        return value
    raise NkigymError(
        f"interpret: input {name!r} has dtype {dtype}, which is not a real number type "
        "(pass bool, integer or floating-point values)"
    )


def _dtype_argument(program: Program, dtype: object) -> None:
    """Refuse a ``dtype`` that is not a numpy dtype, saying inputs go by keyword when it
    looks like an array passed positionally."""
    try:
        np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError:
        if isinstance(dtype, np.ndarray | list | tuple):
            names = ", ".join(f"{p.name}=..." for p in program.params)
            raise NkigymError(
                f"interpret: pass inputs by keyword, one per parameter: interpret(program, {names}) "
                f"(the second positional argument is dtype, got a {type(dtype).__name__})"
            ) from None
        raise NkigymError(f"interpret: dtype must be a numpy dtype or None, got {describe(dtype)}") from None


def interpret(
    program: Program,
    dtype: npt.DTypeLike | None = None,
    *,
    max_bytes: Any = DEFAULT_MAX_BYTES,
    **arrays: Any,
) -> Any:
    """Run ``program`` on ``arrays`` (by parameter name) and return what it returns
    (one array, or a tuple). A fragment returns a dict of the tensors it writes.

    The interpreter holds the inputs, the outputs and the tiles live at each statement
    (a fragment's tiles throughout); a program needing more than
    ``max_bytes`` (default 4 GiB, ``None``: no limit) is refused with
    ``ResourceLimitError`` before anything is allocated, as is one numpy cannot allocate.
    (``max_bytes`` is typed ``Any`` only so that ``**arrays`` of numpy arrays type-checks.)
    """
    require_program(program, "program", NkigymError)
    if dtype is not None:
        _dtype_argument(program, dtype)
    if max_bytes is not None and (type(max_bytes) is not int or max_bytes < 0):
        raise NkigymError(f"interpret: max_bytes must be a non-negative int or None, got {max_bytes!r}")
    try:
        with one_blas_thread():  # a fragment returns every tensor it writes
            env = run(program, arrays, dtype, max_bytes, keep=None if program.fragment else program.returns)
    except MemoryError as err:
        raise ResourceLimitError(f"interpret: out of memory running {program.name!r}: {err}") from None
    if program.fragment:
        return {k: v for k, v in env.items() if k not in {p.name for p in program.params}}
    values = tuple(env[name] for name in program.returns)
    return values[0] if len(values) == 1 else values
