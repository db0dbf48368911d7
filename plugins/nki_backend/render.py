"""Printing the kernel: the NKI module text of a list of groups and loops.

Loop variables are named by nesting depth (``i0`` outermost); a region prints its
slices unless it is a whole buffer with constant bounds; an affine bound prints as
``128 * i0 + 256``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .ir import Affine, Alloc, Arg, Assign, Call, Group, Instr, Ref, Unit

HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n"
INDENT = "    "


@dataclass(frozen=True)
class KernelText:
    """What goes around the body: the function's name, parameters, returns and a note."""

    name: str
    params: tuple[str, ...]
    returns: tuple[str, ...]
    note: str


def render_kernel(kernel: KernelText, units: Sequence[Unit], loop_prefix: str = "i") -> str:
    """The whole NKI module for ``units``."""
    lines = [HEADER, "", f"# {kernel.note}", "@nki.jit", f"def {kernel.name}({', '.join(kernel.params)}):"]
    lines += render_units(units, 1, {}, loop_prefix)
    lines.append(f"{INDENT}return {', '.join(kernel.returns)}")
    return "\n".join(lines) + "\n"


def render_units(units: Sequence[Unit], depth: int, loops: dict[int, str], prefix: str) -> list[str]:
    """Lines of ``units`` at indentation ``depth``; ``loops`` names the enclosing loops."""
    pad = INDENT * depth
    out: list[str] = []
    for unit in units:
        if isinstance(unit, Group):
            out.append(f"{pad}# {unit.comment}")
            for instr in unit.instrs:
                out += [pad + line for line in _instr_lines(instr, loops)]
        else:
            var = f"{prefix}{len(loops)}"
            out += [f"{pad}{family.name} = []" for family in unit.families]
            out.append(f"{pad}for {var} in range({unit.count}):")
            out += render_units(unit.body, depth + 1, {**loops, unit.id: var}, prefix)
    return out


def _instr_lines(instr: Instr, loops: dict[int, str]) -> list[str]:
    if isinstance(instr, Alloc):
        tile = instr.tile
        lines = [f"{tile.name} = nl.ndarray({tile.shape!r}, dtype={tile.dtype}, buffer=nl.{tile.buffer})"]
        if instr.append_to is not None:
            lines.append(f"{instr.append_to.name}.append({tile.name})")
        return lines
    if isinstance(instr, Assign):
        return [f"{instr.name} = {instr.code}"]
    assert isinstance(instr, Call)
    args = ", ".join(f"{key}={arg_text(arg, loops)}" for key, arg in instr.args)
    return [f"{instr.fn}({args})"]


def arg_text(arg: Arg, loops: dict[int, str]) -> str:
    if isinstance(arg, Ref):
        return ref_text(arg, loops)
    if isinstance(arg, Affine):
        return affine_text(arg, loops)
    return arg


def ref_text(ref: Ref, loops: dict[int, str]) -> str:
    """``name``, ``name[a:b, c:d]`` or ``family[i][a:b, c:d]``."""
    text = ref.base.name
    if ref.index is not None:
        text += f"[{affine_text(ref.index, loops)}]"
    if not _whole(ref, ref.base.shape):
        bounds = ", ".join(f"{affine_text(lo, loops)}:{affine_text(hi, loops)}" for lo, hi in ref.slices)
        text += f"[{bounds}]"
    return text


def _whole(ref: Ref, shape: tuple[int, ...]) -> bool:
    return len(ref.slices) == len(shape) and all(
        not lo.terms and not hi.terms and lo.const == 0 and hi.const == size
        for (lo, hi), size in zip(ref.slices, shape, strict=True)
    )


def affine_text(value: Affine, loops: dict[int, str]) -> str:
    """``3``, ``i0``, ``128 * i0 + 256``, ``512 * i1 - 128``."""
    parts = []
    depth = {loop: i for i, loop in enumerate(loops)}
    for loop, coeff in sorted(value.terms, key=lambda t: depth[t[0]]):
        name = loops[loop]
        term = name if abs(coeff) == 1 else f"{abs(coeff)} * {name}"
        parts.append(("-" if coeff < 0 else "+", term))
    if value.const or not parts:
        parts.append(("-" if value.const < 0 else "+", str(abs(value.const))))
    sign, first = parts[0]
    text = f"-{first}" if sign == "-" else first
    for sign, term in parts[1:]:
        text += f" {sign} {term}"
    return text
