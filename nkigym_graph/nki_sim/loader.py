"""Loading a kernel: from NKI source text or from a Python function object.

Source text is a whole module (``import nki`` ... ``@nki.jit def kernel(...)``) executed
in a fresh namespace whose ``__import__`` serves the mock modules; its lines are the
error lines. The kernel is the ``@nki.jit`` function (``kernel_name`` picks one of
several), or the only function when none is decorated.

A function object is re-executed from ``inspect.getsource`` in the same kind of
namespace, so it need not have been importable with a real ``nki``; errors name lines
of its own file. Functions of the same file that it calls are re-executed beside it;
other names it uses from its module (constants, numpy) are copied in, except ``nki``
objects; ``nki``, ``nl`` and ``nisa`` default to the mock modules.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import linecache
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType, FunctionType, ModuleType
from typing import Any

from nkigym_graph.nki_sim.errors import NKISimulationError
from nkigym_graph.nki_sim.modules import JitKernel, kernel_builtins

_COUNTER = itertools.count(1)
_DEFAULT_ALIASES = {"nki": "nki", "nl": "nki.language", "nisa": "nki.isa"}


@dataclass(frozen=True)
class KernelSource:
    """Compiled kernel code, the file its lines belong to, and what to seed its namespace."""

    code: CodeType
    filename: str
    kernel_name: str | None
    seed: dict[str, Any] = field(default_factory=dict)
    helpers: tuple[CodeType, ...] = ()
    """Same-file functions a function-object kernel calls, re-executed beside it."""


def _source_error(detail: str, line: int = 0) -> NKISimulationError:
    return NKISimulationError("kernel.source", detail, "kernel", line)


def _from_text(text: str, kernel_name: str | None) -> KernelSource:
    filename = f"<nki-kernel-{next(_COUNTER)}>"
    try:
        code = compile(text, filename, "exec")
    except SyntaxError as exc:
        raise _source_error(f"syntax error: {exc.msg}", exc.lineno or 0) from None
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    return KernelSource(code, filename, kernel_name)


def _is_nki_object(value: Any) -> bool:
    module = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", "")
    name = str(module or "")
    return name.split(".")[0] in ("nki", "neuronxcc")


def _names(code: CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _names(const)
    return names


def _compile_function(func: FunctionType) -> tuple[CodeType, str]:
    """``func``'s source compiled at its own file's line numbers."""
    try:
        lines, first = inspect.getsourcelines(func)
        filename = inspect.getsourcefile(func) or func.__code__.co_filename
    except (OSError, TypeError) as exc:
        raise _source_error(f"cannot read the source of {func.__qualname__}: {exc}") from None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    return compile(tree, filename, "exec"), filename


def _from_function(obj: Any, kernel_name: str | None) -> KernelSource:
    func = inspect.unwrap(obj)
    if not isinstance(func, FunctionType):
        inner = getattr(func, "func", None)
        func = inspect.unwrap(inner) if inner is not None else func
    if not isinstance(func, FunctionType):
        raise _source_error(f"expected NKI source text or a function, got {type(obj).__name__}")
    if func.__name__ == "<lambda>":  # its source is the whole line around it, run as the kernel
        raise _source_error(
            "a lambda cannot be a kernel (it is re-executed from its source); define it with def",
            func.__code__.co_firstlineno,
        )
    code, filename = _compile_function(func)
    seed: dict[str, Any] = {}
    for name, value in inspect.getclosurevars(func).nonlocals.items():
        if not _is_nki_object(value):
            seed[name] = value
    helpers: list[CodeType] = []
    visited = {func}
    pending = [func]
    while pending:
        current = pending.pop()
        for name in sorted(_names(current.__code__)):
            if name in seed or name not in current.__globals__:
                continue
            value = current.__globals__[name]
            if _is_nki_object(value):
                continue
            if isinstance(value, FunctionType) and (value.__code__.co_filename == func.__code__.co_filename):
                if value not in visited:
                    visited.add(value)
                    pending.append(value)
                    helpers.append(_compile_function(value)[0])
                continue
            seed[name] = value
    return KernelSource(code, filename, kernel_name or func.__name__, seed, helpers=tuple(helpers))


def load_source(kernel_or_source: Any, kernel_name: str | None = None) -> KernelSource:
    """Compile NKI source text or a function object (see module docstring)."""
    if isinstance(kernel_or_source, str):
        return _from_text(kernel_or_source, kernel_name)
    return _from_function(kernel_or_source, kernel_name)


def _unwrap_kernel(value: Any) -> Callable[..., Any] | None:
    if isinstance(value, JitKernel):
        return value.func
    if isinstance(value, FunctionType):
        return value
    return None


def instantiate(source: KernelSource, modules: dict[str, ModuleType]) -> Callable[..., Any]:
    """Execute the source in a fresh namespace and return the kernel function."""
    namespace: dict[str, Any] = {
        "__name__": "__nki_kernel__",
        "__builtins__": kernel_builtins(modules),
    }
    for alias, module in _DEFAULT_ALIASES.items():
        namespace[alias] = modules[module]
    namespace.update(source.seed)
    for helper in source.helpers:
        exec(helper, namespace)
    exec(source.code, namespace)
    if source.kernel_name is not None:
        found = _unwrap_kernel(namespace.get(source.kernel_name))
        if found is None:
            raise NKISimulationError("kernel.not_found", f"no kernel function named {source.kernel_name!r}")
        return found
    jitted = [v for v in namespace.values() if isinstance(v, JitKernel)]
    if len(jitted) == 1:
        return jitted[0].func
    if len(jitted) > 1:
        names = ", ".join(sorted(k.func.__name__ for k in jitted))
        raise NKISimulationError("kernel.not_found", f"several @nki.jit kernels ({names}); pass kernel_name=")
    functions = [
        v
        for v in namespace.values()
        if isinstance(v, FunctionType) and v.__code__.co_filename == source.filename
    ]
    if len(functions) == 1:
        return functions[0]
    raise NKISimulationError(
        "kernel.not_found", "no @nki.jit kernel in the source (and not exactly one function)"
    )
