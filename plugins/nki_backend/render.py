"""Printing the kernel: the NKI module text of a list of groups and loops.

Loop variables are named by nesting depth (``i0`` outermost); a region prints its
slices unless it is a whole buffer with constant bounds; an affine bound prints as
``128 * i0 + 256``. A pool's slot index (kept modulo the pool's count) prints with
coefficients of least magnitude and, where its values leave ``[0, count)`` within the
loops' ranges, modulo the count: ``psum[i0 + 2]``, ``psum[-i0 + 3]``, ``psum[i0 % 4]``,
``psum[(2 * i0 + i1 + 1) % 4]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

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


class LoopVar(NamedTuple):
    """An enclosing loop: its variable's name and its trip count."""

    name: str
    trips: int


Loops = dict[int, LoopVar]
"""The enclosing loops by loop id, outermost first."""


def render_kernel(kernel: KernelText, units: Sequence[Unit], loop_prefix: str = "i") -> str:
    """The whole NKI module for ``units``."""
    lines = [HEADER, "", f"# {kernel.note}", "@nki.jit", f"def {kernel.name}({', '.join(kernel.params)}):"]
    lines += render_units(units, 1, {}, loop_prefix)
    lines.append(f"{INDENT}return {', '.join(kernel.returns)}")
    return "\n".join(lines) + "\n"


def render_units(units: Sequence[Unit], depth: int, loops: Loops, prefix: str) -> list[str]:
    """Lines of ``units`` at indentation ``depth``; ``loops`` names the enclosing loops."""
    pad = INDENT * depth
    out: list[str] = []
    for unit in units:
        if isinstance(unit, Group):
            if unit.comment:
                out.append(f"{pad}# {unit.comment}")
            for instr in unit.instrs:
                out += [pad + line for line in _instr_lines(instr, loops)]
        else:
            var = f"{prefix}{len(loops)}"
            out += [f"{pad}{family.name} = []" for family in unit.families]
            out.append(f"{pad}for {var} in range({unit.count}):")
            out += render_units(unit.body, depth + 1, {**loops, unit.id: LoopVar(var, unit.count)}, prefix)
    return out


def _instr_lines(instr: Instr, loops: Loops) -> list[str]:
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


def arg_text(arg: Arg, loops: Loops) -> str:
    if isinstance(arg, Ref):
        return ref_text(arg, loops)
    if isinstance(arg, Affine):
        return affine_text(arg, loops)
    return arg


def ref_text(ref: Ref, loops: Loops) -> str:
    """``name``, ``name[a:b, c:d]``, ``family[i][a:b, c:d]`` or ``pool[(i + 1) % 4]``."""
    text = ref.base.name
    if ref.index is not None:
        index = slot_text(ref.index, ref.modulus, loops) if ref.modulus else affine_text(ref.index, loops)
        text += f"[{index}]"
    if not _whole(ref, ref.base.shape):
        bounds = ", ".join(f"{affine_text(lo, loops)}:{affine_text(hi, loops)}" for lo, hi in ref.slices)
        text += f"[{bounds}]"
    return text


def _whole(ref: Ref, shape: tuple[int, ...]) -> bool:
    return len(ref.slices) == len(shape) and all(
        not lo.terms and not hi.terms and lo.const == 0 and hi.const == size
        for (lo, hi), size in zip(ref.slices, shape, strict=True)
    )


def slot_text(value: Affine, modulus: int, loops: Loops) -> str:
    """A slot index taken modulo ``modulus``: each coefficient as its residue of least
    magnitude, the constant as the residue that keeps the index in ``[0, modulus)`` over
    the loops' ranges if one does (then no ``%``), else as ``(... ) % modulus``."""
    terms = tuple((loop, c if 2 * c <= modulus else c - modulus) for loop, c in value.modulo(modulus).terms)
    low = sum(min(0, c * (loops[loop].trips - 1)) for loop, c in terms)
    high = sum(max(0, c * (loops[loop].trips - 1)) for loop, c in terms)
    const = value.const % modulus
    const += modulus * -((const + low) // modulus)  # the least residue with const + low >= 0
    if const + high < modulus:
        return affine_text(Affine(const, terms), loops)
    text = affine_text(Affine(value.const % modulus, terms), loops)
    bare = value.const % modulus == 0 and len(terms) == 1 and terms[0][1] == 1  # i0 % 4
    return f"{text} % {modulus}" if bare else f"({text}) % {modulus}"


def affine_text(value: Affine, loops: Loops) -> str:
    """``3``, ``i0``, ``128 * i0 + 256``, ``512 * i1 - 128``."""
    parts = []
    depth = {loop: i for i, loop in enumerate(loops)}
    for loop, coeff in sorted(value.terms, key=lambda t: depth[t[0]]):
        name = loops[loop].name
        term = name if abs(coeff) == 1 else f"{abs(coeff)} * {name}"
        parts.append(("-" if coeff < 0 else "+", term))
    if value.const or not parts:
        parts.append(("-" if value.const < 0 else "+", str(abs(value.const))))
    sign, first = parts[0]
    text = f"-{first}" if sign == "-" else first
    for sign, term in parts[1:]:
        text += f" {sign} {term}"
    return text
