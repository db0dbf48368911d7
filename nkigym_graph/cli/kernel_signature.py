"""A kernel file's parameters, read without running it: the ``--shape`` names of
``simulate`` and ``profile`` must be among them, and the inputs are passed in their order."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

from nkigym_graph.cli.inputs import UsageError


def shapes_for_kernel(kernel: Path, shapes: Mapping[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    """``shapes`` in the order of the kernel's parameters (they are passed in that order); a
    name that is not one of its parameters is refused, naming them. When the kernel cannot
    be found in the file without running it, ``shapes`` is returned as given."""
    found = kernel_signature(kernel)
    if found is None:
        return dict(shapes)
    name, parameters = found
    unknown = [n for n in shapes if n not in parameters]
    if unknown:
        raise UsageError(
            f"the kernel {name}({', '.join(parameters)}) in {kernel} has no parameter(s) "
            f"{', '.join(map(repr, unknown))}: give --shape NAME=DIMxDIM for its parameters"
        )
    return {n: shapes[n] for n in parameters if n in shapes}


def kernel_signature(kernel: Path) -> tuple[str, list[str]] | None:
    """The name and parameters of the kernel in an NKI file, read (not run) as the simulator
    picks it: the ``@nki.jit`` function, else the only function. None when there is no
    such single function, it takes ``*args``, ``**kwargs`` or keyword-only parameters, or
    the file does not parse (the simulator reports those)."""
    try:
        tree = ast.parse(kernel.read_text())
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    jitted = [f for f in functions if any(_is_jit(d) for d in f.decorator_list)]
    candidates = jitted or functions
    if len(candidates) != 1:
        return None
    func = candidates[0]
    args = func.args
    if args.vararg or args.kwarg or args.kwonlyargs:
        return None
    return func.name, [a.arg for a in (*args.posonlyargs, *args.args)]


def _is_jit(decorator: ast.expr) -> bool:
    """``@nki.jit``, ``@jit`` or either called with options."""
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(called, ast.Attribute) and called.attr == "jit") or (
        isinstance(called, ast.Name) and called.id == "jit"
    )
