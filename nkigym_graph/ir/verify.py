"""Verification: the rules every program satisfies, checked when it is built.

Rule ids (``VerificationError.rule``):

- ``arity``: a statement has exactly ``len(op.operand_names)`` operands (checked first,
  by ``nkigym_graph.ir.variables``).
- ``attributes``: the op's attributes are present, known and valid.
- ``slices``: every range is ``start < stop`` with ``start >= 0``, one per dimension.
- ``unknown_variable``: a statement reads a variable nothing defines.
- ``read_before_write``: a read of a region no earlier statement wrote (this is also
  why the DAG is acyclic: every edge points forward in statement order).
- ``write_to_parameter`` / ``redefinition`` / ``definition`` / ``duplicate_parameter``:
  see ``nkigym_graph.ir.variables``.
- ``bounds``: every operand's slices lie inside its variable's shape.
- ``memory``: loads read HBM and write on-chip tiles; stores read on-chip tiles and
  write HBM; compute ops read and write on-chip tiles.
- ``shape``: the destination's shape is what the op computes from its inputs.
- ``limit``: the op's axis sizes are within the target's limits.
- ``capacity``: every tensor fits its memory (HBM, SBUF, PSUM); see ``nkigym_graph.ir.capacity``.
- ``return``: the returned variable exists and a statement writes it (an allocated
  output that no statement stores to is refused).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from nkigym_graph.errors import VerificationError
from nkigym_graph.ir.dependencies import Dependencies
from nkigym_graph.ir.ops.base import ShapeError
from nkigym_graph.ir.slices import format_slices
from nkigym_graph.ir.statement import Statement, Statements
from nkigym_graph.ir.targets import Target
from nkigym_graph.ir.variables import INTERMEDIATE, OUTPUT, Variable

Describe = Callable[[int], str]
_UNSEEN = ("", "")
"""Marks an op-level verdict not worked out yet."""


def check_statements(
    statements: Statements,
    variables: Mapping[str, Variable],
    target: Target,
    describe: Describe,
    nodes: Iterable[int] | None = None,
) -> None:
    """Per-statement rules: arity, attributes, slices, bounds, memory, shape, limits
    (of the statements at ``nodes``, or of all).

    The op-level rules depend only on the op, its attributes and its operands' slices,
    so their verdicts are cached by that key: a tiled program repeats few patterns.
    """
    op_verdicts: dict[tuple[Any, ...], tuple[str, str] | None] = {}
    bounds_ok: set[tuple[Any, ...]] = set()
    for node in range(len(statements)) if nodes is None else nodes:
        stmt = statements[node]
        op, operands, attrs = stmt.op, stmt.operands, stmt.attrs
        key = (op, attrs, tuple([o[1] for o in operands]))
        verdict = op_verdicts.get(key, _UNSEEN)
        if verdict is _UNSEEN:
            verdict = op_verdicts[key] = _op_verdict(stmt, target)
        if verdict is not None:
            raise VerificationError(verdict[0], verdict[1], describe(node))
        on_chip_positions = op.on_chip_positions
        moves_data = op.engine != "none"
        for position, (var, slices) in enumerate(operands):
            info = variables.get(var)
            if info is None:
                raise VerificationError("unknown_variable", f"{var!r} is not defined", describe(node))
            bound = (slices, info.shape)
            if bound not in bounds_ok:
                _check_slices(var, slices, info, describe, node)
                bounds_ok.add(bound)
            on_chip = position in on_chip_positions
            if on_chip == info.external and moves_data:
                where = "an on-chip tile" if on_chip else "an HBM tensor"
                raise VerificationError(
                    "memory",
                    f"{op.name} operand {op.operand_names[position]} must be {where}, "
                    f"but {var!r} is {'an HBM tensor' if info.external else 'an on-chip tile'}",
                    describe(node),
                )


def _op_verdict(stmt: Statement, target: Target) -> tuple[str, str] | None:
    """The first op-level rule ``stmt`` breaks, as ``(rule, message)``, or None."""
    op = stmt.op
    problem = op.check_attrs(stmt.attrs)
    if problem:
        return "attributes", problem
    if any(len(o.slices) == 0 for o in stmt.operands):
        return "slices", "an operand has no dimensions"
    if op.write_positions and op.read_positions:
        in_shapes = [_extent(stmt.operands[p].slices) for p in op.read_positions]
        try:
            expected = tuple(op.output_shape(in_shapes, stmt.attrs))
        except ShapeError as err:
            return "shape", str(err)
        got = _extent(stmt.dst.slices)
        if got != expected:
            return "shape", f"{op.name} produces {expected} but writes a {got} region"
    violations = op.limit_violations(stmt, target)
    if violations:
        return "limit", "; ".join(violations)
    return None


def _extent(slices: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    return tuple(stop - start for start, stop in slices)


def _check_slices(var: str, slices: tuple[Any, ...], info: Variable, describe: Describe, node: int) -> None:
    if len(slices) != len(info.shape):
        raise VerificationError(
            "slices",
            f"{var!r} has {len(info.shape)} dimensions but is indexed with {len(slices)}",
            describe(node),
        )
    for (start, stop), size in zip(slices, info.shape, strict=True):
        if not (0 <= start < stop):
            raise VerificationError(
                "slices", f"empty or negative range {start}:{stop} on {var!r}", describe(node)
            )
        if stop > size:
            raise VerificationError(
                "bounds",
                f"{var}[{format_slices(slices)}] is outside its shape {info.shape}",
                describe(node),
            )


def check_dependencies(
    statements: Statements,
    variables: Mapping[str, Variable],
    deps: Dependencies,
    describe: Describe,
) -> None:
    """Every read of a written variable is preceded by writes covering it."""
    for node, position in deps.uncovered:
        var, slices = statements[node].operands[position]
        kind = "intermediate" if variables[var].kind == INTERMEDIATE else "output"
        raise VerificationError(
            "read_before_write",
            f"reads {var}[{format_slices(slices)}] ({kind}) before it is fully written",
            describe(node),
        )


def stored(var: str, writes: int, variables: Mapping[str, Variable]) -> bool:
    """Whether ``writes`` statements writing ``var`` (its ``nkigym.ndarray`` allocation
    included) include one that stores data in it."""
    info = variables.get(var)
    allocated = info is not None and info.kind == OUTPUT and info.defined_by is not None
    return writes > allocated


def check_returns(returns: Sequence[str], variables: Mapping[str, Variable], written: set[str]) -> None:
    """The returned variables exist and are written (``written``: the returned variables
    some statement stores data in, see ``stored``)."""
    for var in returns:
        if var not in variables:
            raise VerificationError("return", f"returns {var!r}, which is not defined")
        if variables[var].kind == INTERMEDIATE:
            raise VerificationError(
                "return",
                f"returns {var!r}, an on-chip tile; a program returns HBM tensors: store it into "
                "an output (`output = nkigym.ndarray(...)`) and return that",
            )
        if var not in written and variables[var].kind != "param":
            raise VerificationError("return", f"returns {var!r}, which no statement writes")
