"""The mock ``nki``, ``nki.language``, ``nki.isa`` and ``nki.typing`` modules.

They are built afresh for every run and reachable only through the ``__import__`` of
the kernel's own namespace: they are never put in ``sys.modules``, so a real ``nki``
(or its absence) is untouched. ``neuronxcc.nki...`` imports of older kernels resolve to
the same modules. An ``nki`` name the simulator lacks fails ``api.unsupported``.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable
from types import ModuleType
from typing import Any

from nkigym_graph.ir.targets import Target
from nkigym_graph.nki_sim import (
    isa_enums,
    isa_matmul,
    isa_move,
    isa_select,
    isa_stats,
    isa_vector,
    language,
    values,
)
from nkigym_graph.nki_sim.buffers import BUFFERS
from nkigym_graph.nki_sim.dtypes import NKI_DTYPES
from nkigym_graph.nki_sim.errors import NKISimulationError
from nkigym_graph.nki_sim.mathops import MATH_OPS
from nkigym_graph.nki_sim.state import kernel_line
from nkigym_graph.nki_sim.tensor import Tensor

_ISA_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "nc_matmul": isa_matmul.nc_matmul,
    "nc_transpose": isa_matmul.nc_transpose,
    "activation": isa_vector.activation,
    "activation_reduce": isa_vector.activation_reduce,
    "reciprocal": isa_vector.reciprocal,
    "tensor_tensor": isa_vector.tensor_tensor,
    "tensor_scalar": isa_vector.tensor_scalar,
    "tensor_scalar_reduce": isa_vector.tensor_scalar_reduce,
    "scalar_tensor_tensor": isa_vector.scalar_tensor_tensor,
    "tensor_reduce": isa_vector.tensor_reduce,
    "tensor_tensor_scan": isa_vector.tensor_tensor_scan,
    "bn_stats": isa_stats.bn_stats,
    "bn_aggr": isa_stats.bn_aggr,
    "dma_copy": isa_move.dma_copy,
    "dma_transpose": isa_move.dma_transpose,
    "tensor_copy": isa_move.tensor_copy,
    "memset": isa_move.memset,
    "iota": isa_select.iota,
    "affine_select": isa_select.affine_select,
}

_LANGUAGE_FUNCTIONS: dict[str, Any] = {
    "ndarray": language.ndarray,
    "zeros": language.zeros,
    "zeros_like": language.zeros_like,
    "ones": language.ones,
    "full": language.full,
    "ds": language.ds,
    "affine_range": language.affine_range,
    "sequential_range": language.sequential_range,
    "static_range": language.static_range,
    "program_id": language.program_id,
    "num_programs": language.num_programs,
    "program_ndim": language.program_ndim,
    "device_print": language.device_print,
    "NKIObject": language.NKIObject,
    "load": values.load,
    "store": values.store,
    "matmul": values.matmul,
    "transpose": values.transpose,
    "broadcast_to": values.broadcast_to,
    "sum": values.sum_,
    "prod": values.prod,
    "mean": values.mean,
}


class JitKernel:
    """What ``@nki.jit`` returns: calls the function; ``kernel[grid]`` is the kernel."""

    def __init__(self, func: Callable[..., Any], options: dict[str, Any]) -> None:
        self.func = func
        self.options = options
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __getitem__(self, grid: Any) -> JitKernel:
        return self


def jit(func: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``@nki.jit``, ``@nki.jit()`` and ``@nki.jit(platform_target=...)``."""
    if func is None:
        return lambda f: JitKernel(f, options)
    return JitKernel(func, options)


def _module(name: str, attrs: dict[str, Any]) -> ModuleType:
    module = ModuleType(name, f"Simulated {name} (nkigym_graph.nki_sim).")

    def missing(attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise NKISimulationError(
            "api.unsupported", f"{name}.{attr} is not supported by the NKI simulator", "kernel", kernel_line()
        )

    module.__dict__.update(attrs)
    module.__dict__["__getattr__"] = missing
    return module


def build_modules(target: Target) -> dict[str, ModuleType]:
    """Fresh mock modules for one run on ``target``, keyed by import name."""
    core = str(target.facts.get("core", ""))
    version = isa_enums.nc_version.gen2 if core.endswith("v2") else isa_enums.nc_version.gen3
    lang = _module(
        "nki.language",
        {
            **NKI_DTYPES,
            **BUFFERS,
            **MATH_OPS,
            **_LANGUAGE_FUNCTIONS,
            "tile_size": language.tile_size_for(target),
        },
    )
    isa = _module(
        "nki.isa",
        {
            **_ISA_FUNCTIONS,
            **isa_enums.ENGINE_ALIASES,
            "engine": isa_enums.engine,
            "reduce_cmd": isa_enums.reduce_cmd,
            "dge_mode": isa_enums.dge_mode,
            "oob_mode": isa_enums.oob_mode,
            "matmul_perf_mode": isa_enums.matmul_perf_mode,
            "nc_version": isa_enums.nc_version,
            "get_nc_version": lambda: version,
        },
    )
    typing_mod = _module("nki.typing", {"tensor": Tensor})
    nki = _module("nki", {"jit": jit, "language": lang, "isa": isa, "typing": typing_mod})
    neuronxcc = _module("neuronxcc", {"nki": nki})
    return {
        "nki": nki,
        "nki.language": lang,
        "nki.isa": isa,
        "nki.typing": typing_mod,
        "neuronxcc": neuronxcc,
        "neuronxcc.nki": nki,
        "neuronxcc.nki.language": lang,
        "neuronxcc.nki.isa": isa,
        "neuronxcc.nki.typing": typing_mod,
    }


def _is_mocked(name: str) -> bool:
    return name == "neuronxcc" or any(name == p or name.startswith(p + ".") for p in ("nki", "neuronxcc.nki"))


def kernel_builtins(modules: dict[str, ModuleType]) -> dict[str, Any]:
    """A builtins dict whose ``__import__`` serves ``modules`` and defers to Python's own
    import for everything else."""
    real_import = builtins.__import__

    def nki_import(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if level == 0 and _is_mocked(name):
            if name not in modules:
                raise ModuleNotFoundError(f"No module named {name!r} in the NKI simulator")
            return modules[name] if fromlist else modules[name.split(".")[0]]
        return real_import(name, globals, locals, fromlist, level)

    table = dict(builtins.__dict__)
    table["__import__"] = nki_import
    return table
