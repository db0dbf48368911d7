"""The axes of a program: which tensor dimensions are one iteration dimension, and the
global range every statement covers along each.

Each dimension of each variable (parameters, outputs and on-chip tiles alike) is a
node. An op's axis labels (``Op.axes``) join the dimensions of one statement that
share a label -- ``nc_matmul``: K of lhs and rhs, M of lhs and dst, N of rhs and dst;
elementwise ops, loads and stores: partition with partition, free with free -- and the
variables join the statements, so the classes are the program's *axes*. A dimension of
extent 1 among larger ones of the same label is a broadcast and joins nothing.

An on-chip tile sits at an *offset* along each of its axes: ``tensor_0 =
a[0:128, 256:512]`` puts ``tensor_0``'s dimension 1 at 256 along a's axis 1; a
result inherits the offset of the operand it shares a label with. A statement's *box*
is the global range of each axis its operands touch.

Axis names are canonical (they never depend on variable names or statement order):
the matmul role (``M``, ``N``, ``K``) -- or, for an axis no matmul touches, the
elementwise role (``P``, ``F``) -- when exactly one axis has only that role,
otherwise the first parameter or output dimension in the axis (``a.1``).

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> axes = program_axes(tiled_matmul(256, 256, 512))  # M, K, N
>>> sorted(axes.names), dict(axes.sizes)
(['K', 'M', 'N'], {'M': 256, 'N': 512, 'K': 256})
>>> last = axes.program.statements_of("nc_matmul")[-1]
>>> sorted(axes.box(last).items())
[('K', (128, 256)), ('M', (128, 256)), ('N', (384, 512))]
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from nkigym_graph.ir.memo import memo
from nkigym_graph.ir.program import STATEMENTS_KEY
from nkigym_graph.ir.slices import Range

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program

Dim = tuple[str, int]
"""A dimension of a variable: ``(name, index)``."""
Box = Mapping[str, Range]
"""Global range per axis name."""

ROLE_LETTERS: Mapping[str, str] = MappingProxyType(
    {"K": "K", "M": "M", "N": "N", "partition": "P", "free": "F", "reduced": "R"}
)
"""The letter an axis is named by when it alone has that role (op axis label -> letter)."""
MATMUL_LETTERS = frozenset({"K", "M", "N"})
"""Matmul roles name an axis before elementwise ones (an epilogue does not rename M)."""
DATA_MOVEMENT = frozenset({"load", "store", "alloc"})
"""Ops whose labels say nothing about an axis' role (they copy dimensions through)."""


class _Union:
    """Union-find over dimensions."""

    def __init__(self) -> None:
        self.parent: dict[Dim, Dim] = {}

    def find(self, dim: Dim) -> Dim:
        parent = self.parent
        root = parent.setdefault(dim, dim)
        while root != parent[root]:
            root = parent[root]
        while dim != root:
            dim, parent[dim] = parent[dim], root
        return root

    def union(self, a: Dim, b: Dim) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


class ProgramAxes:
    """The axes of one program (see the module docstring); built by ``program_axes``."""

    __slots__ = ("_boxes", "_offsets", "axis_of", "names", "program", "sizes")

    program: Program
    names: tuple[str, ...]
    """Axis names, sorted."""
    sizes: Mapping[str, int]
    """Extent of each axis (the largest global stop seen)."""
    axis_of: Mapping[Dim, str]
    """The axis of each variable dimension that some statement touches."""

    def __init__(self, program: Program) -> None:
        self.program = program
        union = _Union()
        roles: dict[Dim, set[str]] = {}
        for stmt in program.statements:
            groups: dict[str, list[tuple[Dim, int]]] = {}
            for operand, labels in zip(stmt.operands, stmt.op.axes, strict=False):
                for index, (label, (start, stop)) in enumerate(zip(labels, operand.slices, strict=False)):
                    groups.setdefault(label, []).append(((operand.var, index), stop - start))
            role_op = stmt.op.name not in DATA_MOVEMENT
            for label, members in groups.items():
                widest = max(extent for _, extent in members)
                joined = [dim for dim, extent in members if extent == widest or widest == 1]
                first = joined[0]
                union.find(first)
                for dim in joined[1:]:
                    union.union(first, dim)
                if role_op:
                    for dim, _ in members:
                        roles.setdefault(dim, set()).add(label)
        classes: dict[Dim, list[Dim]] = {}
        for dim in list(union.parent):
            classes.setdefault(union.find(dim), []).append(dim)
        class_roles = {
            root: set().union(*(roles.get(d, set()) for d in dims)) for root, dims in classes.items()
        }
        named = _names(program, classes, class_roles)
        self.axis_of = MappingProxyType({dim: named[union.find(dim)] for dim in union.parent})
        self.names = tuple(sorted(set(named.values())))
        self._offsets = self._place()
        self._boxes: dict[int, Box] = {}
        sizes: dict[str, int] = {}
        for dim, axis in self.axis_of.items():
            info = program.variables.get(dim[0])
            if info is not None and dim[1] < len(info.shape):
                stop = self._offsets.get(dim, 0) + info.shape[dim[1]]
                sizes[axis] = max(sizes.get(axis, 0), stop)
        self.sizes = MappingProxyType(sizes)

    def _place(self) -> dict[Dim, int]:
        """The global offset of every on-chip dimension (parameters and outputs sit at 0)."""
        program, axis_of = self.program, self.axis_of
        offsets: dict[Dim, int] = {}
        for stmt in program.statements:
            placed: dict[str, int] = {}  # axis -> global start of this statement's reads
            for position in stmt.op.read_positions:
                var, slices = stmt.operands[position]
                for index, (start, _stop) in enumerate(slices):
                    axis = axis_of.get((var, index))
                    if axis is not None and axis not in placed:
                        placed[axis] = offsets.get((var, index), 0) + start
            for position in stmt.op.write_positions:
                var, slices = stmt.operands[position]
                if program.variables[var].external:
                    continue
                for index, (start, _stop) in enumerate(slices):
                    if (var, index) in offsets:
                        continue  # defined by its first write
                    axis = axis_of.get((var, index))
                    offsets[(var, index)] = placed.get(axis, start) - start if axis is not None else 0
        return offsets

    def offset(self, var: str, index: int) -> int:
        """Global offset of dimension ``index`` of ``var`` along its axis."""
        return self._offsets.get((var, index), 0)

    def box(self, node: int) -> Box:
        """The global range of every axis statement ``node`` touches (reads and writes;
        an HBM operand's slices are global already)."""
        found = self._boxes.get(node)
        if found is not None:
            return found
        box: dict[str, Range] = {}
        offsets, axis_of = self._offsets, self.axis_of
        for var, slices in self.program[node].operands:
            for index, (start, stop) in enumerate(slices):
                axis = axis_of.get((var, index))
                if axis is None:
                    continue
                shift = offsets.get((var, index), 0)
                lo, hi = start + shift, stop + shift
                old = box.get(axis)
                box[axis] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
        self._boxes[node] = found = MappingProxyType(box)
        return found


def program_axes(program: Program) -> ProgramAxes:
    """The axes of ``program`` (computed once per snapshot)."""
    return memo(program, (STATEMENTS_KEY, "axes"), ProgramAxes)


def _names(
    program: Program, classes: Mapping[Dim, list[Dim]], roles: Mapping[Dim, set[str]]
) -> dict[Dim, str]:
    """A canonical name per class (see the module docstring)."""
    external = {p.name for p in (*program.params, *program.outputs)} | {
        name for name, info in program.variables.items() if info.external
    }
    order = {name: i for i, name in enumerate([*(p.name for p in program.params), *sorted(external)])}

    def anchor(root: Dim) -> tuple[int, str, int]:
        dims = [d for d in classes[root] if d[0] in external]
        if not dims:
            return (len(order), "", 0)
        name, index = min(dims, key=lambda d: (order.get(d[0], len(order)), d[1]))
        return (order.get(name, len(order)), name, index)

    sole: dict[str, list[Dim]] = {}
    for root in classes:
        letters = {ROLE_LETTERS.get(label, label) for label in roles[root]}
        if letters & MATMUL_LETTERS:
            letters &= MATMUL_LETTERS
        if len(letters) == 1:
            sole.setdefault(letters.pop(), []).append(root)
    names: dict[Dim, str] = {}
    for letter, roots in sole.items():
        if len(roots) == 1:
            names[roots[0]] = letter
    for root in sorted(classes, key=anchor):
        if root in names:
            continue
        _, var, index = anchor(root)
        name = f"{var}.{index}" if var else f"axis{len(names)}"
        names[root] = name
    return names
