"""Parsing the seeds' tiled-program format into a ``Program``.

The text is read with Python's ``ast`` module and never evaluated. Accepted forms::

    def tiled_matmul(a, b):
        output = nkigym.ndarray((128, 256), dtype=np.float32)       # alloc
        tensor_0 = a[0:128, 0:128]                                   # load
        tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1[0:128, 0:128])  # compute
        tensor_2[0:128, 0:128] += nkigym.nc_matmul(tensor_3, tensor_4) # accumulate
        output[0:128, 0:128] = tensor_2                              # store
        return output

A bare name means the whole tensor. Parameter shapes come from ``shapes=`` or are
inferred from the largest slice read. ``parse_fragment`` reads a bare statement list
(seed 000's examples): undefined variables it reads become inputs (HBM for a load's
source, on-chip otherwise) and undefined tensors it stores into become outputs.
Attribute values are literals; ``float("inf")``, ``float("-inf")`` and ``float("nan")``
are read as such (``nkigym_graph.ir.literals``), without calling anything.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nkigym_graph.errors import ParseError, VerificationError
from nkigym_graph.ir.dtypes import DtypeError, Dtypes, dtype_chooser, resolve_dtype
from nkigym_graph.ir.literals import read_float_call
from nkigym_graph.ir.ops import ALLOC, LOAD, STORE, ops_printed_as
from nkigym_graph.ir.ops.base import Op, ShapeError
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.schedule import ScheduleError
from nkigym_graph.ir.slices import Slices, full
from nkigym_graph.ir.statement import Operand, Statement, make_attrs
from nkigym_graph.ir.targets import TRN2, Target
from nkigym_graph.ir.variables import Param
from nkigym_graph.plugin.registry import get_target
from nkigym_graph.text.source import checked_shapes, nesting_guarded, read_module

Shapes = Mapping[str, Sequence[int]]
ParamsCheck = Callable[[Sequence[str], Sequence[str]], None]
"""Called with the names of a program's parameters and of its outputs (a fragment's
implicit ones) before they are built; raises when they are not the ones declared."""
_NAMESPACES = ("nkigym", "nkigym_graph", "nki")


@nesting_guarded
def parse_program(
    text: str,
    shapes: Shapes | None = None,
    *,
    dtype: Dtypes = "float32",
    target: Target | str = TRN2,
) -> Program:
    """Parse one ``def`` in the tiled-program format (see the module docstring).
    ``dtype``: of every parameter, or a mapping by parameter name (float32 for the
    parameters it leaves out; a name that is not a parameter raises ``DtypeError``)."""
    return _parse_def(text, shapes, dtype, target, None)


@nesting_guarded
def parse_declared(
    text: str,
    shapes: Shapes,
    *,
    dtype: Dtypes,
    target: Target | str,
    fragment: bool,
    check_params: ParamsCheck,
) -> Program:
    """``parse_program`` (``parse_fragment`` if ``fragment``) of text whose parameters are
    declared elsewhere, as a program file's header declares them: ``check_params`` gets the
    names the text gives its parameters and outputs before they are built, and refuses
    what the declaration does not match."""
    if fragment:
        return _parse_statements(text, shapes, "fragment", dtype, target, check_params)
    return _parse_def(text, shapes, dtype, target, check_params)


def _parse_def(
    text: str, shapes: Shapes | None, dtype: Dtypes, target: Target | str, check_params: ParamsCheck | None
) -> Program:
    module = _parse_module(text)
    functions = [n for n in module.body if isinstance(n, ast.FunctionDef)]
    others = [n for n in module.body if not isinstance(n, ast.FunctionDef | ast.Import | ast.ImportFrom)]
    if len(functions) != 1 or others:
        where = (others or functions or module.body or [None])[0]
        raise _error("expected exactly one `def` (imports aside) at top level", where)
    func = functions[0]
    _plain_parameters(func)
    params = [arg.arg for arg in func.args.args]
    builder = _Builder(
        params=params, shapes=checked_shapes(shapes), fragment=False, check_params=check_params
    )
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # docstring
    if not body or not isinstance(body[-1], ast.Return):
        raise _error("the function must end with `return <tensor>`", body[-1] if body else func)
    for node in body[:-1]:
        builder.statement(node)
    returns = builder.returns(body[-1])
    program = builder.build(func.name, returns, dtype=dtype, target=target)
    schedule = _schedule(func)
    return program if schedule is None else _scheduled(program, schedule, func)


def _schedule(func: ast.FunctionDef) -> str | None:
    """The text of the ``@nkigym.schedule("...")`` decorator, if there is one."""
    if not func.decorator_list:
        return None
    (decorator, *more) = func.decorator_list
    if (
        more
        or not isinstance(decorator, ast.Call)
        or not isinstance(decorator.func, ast.Attribute)
        or decorator.func.attr != "schedule"
        or not isinstance(decorator.func.value, ast.Name)
        or decorator.func.value.id not in _NAMESPACES
        or decorator.keywords
        or len(decorator.args) != 1
        or not isinstance(decorator.args[0], ast.Constant)
        or not isinstance(decorator.args[0].value, str)
    ):
        raise _error('the only decorator a program takes is @nkigym.schedule("...")', decorator)
    return decorator.args[0].value


def _scheduled(program: Program, schedule: str, func: ast.FunctionDef) -> Program:
    try:
        return program.with_schedule(schedule)
    except ScheduleError as err:
        raise _error(str(err), func.decorator_list[0]) from None


@nesting_guarded
def parse_fragment(
    text: str,
    shapes: Shapes | None = None,
    *,
    name: str = "fragment",
    dtype: Dtypes = "float32",
    target: Target | str = TRN2,
) -> Program:
    """Parse a bare list of statements (no ``def``/``return``) into a fragment program."""
    return _parse_statements(text, shapes, name, dtype, target, None)


def _parse_statements(
    text: str,
    shapes: Shapes | None,
    name: str,
    dtype: Dtypes,
    target: Target | str,
    check_params: ParamsCheck | None,
) -> Program:
    module = _parse_module(text)
    builder = _Builder(params=[], shapes=checked_shapes(shapes), fragment=True, check_params=check_params)
    for node in module.body:
        builder.statement(node)
    return builder.build(name, (), dtype=dtype, target=target)


def _parse_module(text: str) -> ast.Module:
    return read_module(text)


def _error(message: str, node: ast.AST | None) -> ParseError:
    line = getattr(node, "lineno", 0) or 0
    column = (getattr(node, "col_offset", -1) or 0) + 1 if node is not None else 0
    return ParseError(message, line, column)


@dataclass
class _Ref:
    """An operand as written: a variable and its slices (None: bare name)."""

    var: str
    slices: tuple[tuple[int | None, int | None], ...] | None
    node: ast.AST


@dataclass
class _Pending:
    """A statement whose operands are not resolved yet."""

    op: Op
    reads: list[_Ref]
    dst: _Ref
    attrs: tuple[tuple[str, Any], ...]
    accumulate: bool
    node: ast.AST
    alloc_shape: tuple[int, ...] | None = None
    alternatives: tuple[Op, ...] = ()
    """Ops printed alike with as many tensor operands: the first whose shapes fit is meant."""


def _plain_parameters(func: ast.FunctionDef) -> None:
    """A program's parameters are plain names: no defaults, ``*args``, keyword-only
    parameters or ``**kwargs`` (which would be dropped silently)."""
    args = func.args
    extra = args.vararg or args.kwarg or (args.kwonlyargs[0] if args.kwonlyargs else None)
    if extra is not None:
        raise _error(f"parameter `{extra.arg}`: a program takes plain parameters only", extra)
    if args.defaults or args.posonlyargs:
        where = args.defaults[0] if args.defaults else args.posonlyargs[0]
        raise _error("a program takes plain parameters only (no defaults or `/`)", where)
    seen: set[str] = set()
    for arg in args.args:
        if arg.arg in seen:
            raise _error(f"parameter `{arg.arg}` is listed twice", arg)
        seen.add(arg.arg)


@dataclass
class _Builder:
    params: list[str]
    shapes: dict[str, Sequence[int]]
    fragment: bool
    pending: list[_Pending] = field(default_factory=list)
    allocated: set[str] = field(default_factory=set)
    defined: set[str] = field(default_factory=set)
    returned: list[ast.Name] = field(default_factory=list)
    """The names of the `return` statement, as written."""
    check_params: ParamsCheck | None = None
    """Called with the parameters' and outputs' names before they are built (see ``parse_declared``)."""

    # -- statements -------------------------------------------------------------------
    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # a string used as a comment
        if isinstance(node, ast.Pass):
            return
        if isinstance(node, ast.AugAssign):
            if not isinstance(node.op, ast.Add):
                raise _error("only `+=` accumulation is supported", node)
            self._assign(node.target, node.value, accumulate=True, node=node)
            return
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1:
                raise _error("chained assignment is not supported", node)
            self._assign(node.targets[0], node.value, accumulate=False, node=node)
            return
        raise _error(f"unsupported statement `{ast.unparse(node)}`", node)

    def _assign(self, target: ast.expr, value: ast.expr, accumulate: bool, node: ast.stmt) -> None:
        dst = self._ref(target)
        if isinstance(value, ast.Call):
            op_name = self._call_name(value)
            if op_name == "ndarray":
                self._alloc(dst, value, node)
                return
            ops = self._call_ops(self._lookup(op_name, value), value)
            reads, attrs = self._call_args(ops[0], value)
            self._define(dst)
            self.pending.append(_Pending(ops[0], reads, dst, attrs, accumulate, node, alternatives=ops))
            return
        if accumulate:
            raise _error("`+=` needs an op call on the right-hand side", value)
        src = self._ref(value)
        if dst.slices is None:  # tensor_0 = a[...]: a load
            if src.var in self.defined:
                raise _error(f"`{src.var}` is an on-chip tile; only HBM tensors are loaded", value)
            self._define(dst)
            self.pending.append(_Pending(LOAD, [src], dst, (), False, node))
        else:  # output[...] = tensor_2[...]: a store
            self.pending.append(_Pending(STORE, [src], dst, (), False, node))

    def _define(self, ref: _Ref) -> None:
        if ref.slices is None:
            if ref.var in self.defined or ref.var in self.params or ref.var in self.allocated:
                raise _error(f"`{ref.var}` is already defined", ref.node)
            self.defined.add(ref.var)

    def _alloc(self, dst: _Ref, call: ast.Call, node: ast.stmt) -> None:
        if dst.slices is not None:
            raise _error("allocate into a bare name: `output = nkigym.ndarray(...)`", node)
        if not call.args or not isinstance(call.args[0], ast.Tuple | ast.List):
            raise _error("nkigym.ndarray takes a shape tuple first", call)
        shape = tuple(self._int(e) for e in call.args[0].elts)
        dtype = "float32"
        for kw in call.keywords:
            if kw.arg != "dtype":
                raise _error(f"nkigym.ndarray takes no keyword {kw.arg!r}", kw)
            dtype = self._dtype(kw.value)
        if dst.var in self.params or dst.var in self.allocated or dst.var in self.defined:
            raise _error(f"`{dst.var}` is already defined", node)
        self.allocated.add(dst.var)
        self.pending.append(_Pending(ALLOC, [], dst, make_attrs(dtype=dtype), False, node, alloc_shape=shape))

    # -- expressions ------------------------------------------------------------------
    def _call_name(self, call: ast.Call) -> str:
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in _NAMESPACES
        ):
            return func.attr
        if isinstance(func, ast.Name):
            return func.id
        raise _error(f"unsupported call `{ast.unparse(func)}`; expected nkigym.<op>(...)", call)

    def _lookup(self, name: str, call: ast.Call) -> list[Op]:
        ops = ops_printed_as(name)
        if not ops:
            raise _error(f"unknown op `{name}`", call)
        if all(op.engine in ("none", "dma") for op in ops):
            raise _error(f"`{name}` is not a compute op", call)
        return [op for op in ops if op.engine not in ("none", "dma")]

    def _tensor_name(self, name: str) -> bool:
        """Whether a bare name is a tensor: a known one, or (in a fragment) an implicit input."""
        known = name in self.defined or name in self.params or name in self.allocated
        return known or self.fragment

    def _call_ops(self, ops: list[Op], call: ast.Call) -> tuple[Op, ...]:
        """The ops of the family ``ops`` that take as many tensors as ``call`` passes first
        (``tensor_scalar(x, 0.5)`` or ``tensor_scalar(x, column)``); all of them if none does."""
        tensors = 0
        for arg in call.args:
            if not (
                isinstance(arg, ast.Subscript) or (isinstance(arg, ast.Name) and self._tensor_name(arg.id))
            ):
                break
            tensors += 1
        fitting = tuple(op for op in ops if len(op.read_positions) == tensors)
        return fitting or tuple(ops)

    def _call_args(self, op: Op, call: ast.Call) -> tuple[list[_Ref], tuple[tuple[str, Any], ...]]:
        n_reads = len(op.read_positions)
        args = list(call.args)
        if len(args) < n_reads or len(args) > n_reads + len(op.positional_attrs):
            raise _error(
                f"{op.name} takes {n_reads} tensor argument(s)"
                + (f" and {', '.join(op.positional_attrs)}" if op.positional_attrs else ""),
                call,
            )
        reads = [self._ref(a) for a in args[:n_reads]]
        attrs: dict[str, Any] = {}
        for key, arg in zip(op.positional_attrs, args[n_reads:], strict=False):
            attrs[key] = self._literal(arg)
        for kw in call.keywords:
            if kw.arg is None:
                raise _error("`**kwargs` is not supported", kw)
            if kw.arg in attrs:
                raise _error(f"{kw.arg} given twice", kw)
            value = kw.value
            known = isinstance(value, ast.Name) and value.id in self.defined | self.allocated | set(
                self.params
            )
            if isinstance(value, ast.Subscript) or known:  # `bias=tile`: the Python API's spelling
                tensor = ast.unparse(value)
                written = ", ".join([*(ast.unparse(a) for a in args[:n_reads]), tensor])
                raise _error(
                    f"`{kw.arg}={tensor}` passes a tensor as a keyword; a tensor operand is written "
                    f"positionally after the input(s): `nkigym.{self._call_name(call)}({written}, ...)`",
                    kw,
                )
            attrs[kw.arg] = self._literal(kw.value)
        return reads, make_attrs(**attrs)

    def _ref(self, expr: ast.expr) -> _Ref:
        if isinstance(expr, ast.Name):
            return _Ref(expr.id, None, expr)
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):
            index = expr.slice
            dims = index.elts if isinstance(index, ast.Tuple) else [index]
            slices = []
            for dim in dims:
                if not isinstance(dim, ast.Slice) or dim.step is not None:
                    raise _error(f"expected `start:stop` ranges, got `{ast.unparse(dim)}`", dim)
                lo = None if dim.lower is None else self._int(dim.lower)
                hi = None if dim.upper is None else self._int(dim.upper)
                if lo is not None and hi is not None and hi <= lo:
                    raise _error(
                        f"the range `{lo}:{hi}` is empty (a range is `start:stop` with start < stop)", dim
                    )
                slices.append((lo, hi))
            return _Ref(expr.value.id, tuple(slices), expr)
        raise _error(f"expected a tensor reference, got `{ast.unparse(expr)}`", expr)

    def _int(self, expr: ast.expr) -> int:
        if isinstance(expr, ast.Constant) and type(expr.value) is int and expr.value >= 0:
            return expr.value
        raise _error(f"expected a non-negative integer literal, got `{ast.unparse(expr)}`", expr)

    def _literal(self, expr: ast.expr) -> Any:
        non_finite = read_float_call(expr)
        if non_finite is not None:
            return non_finite
        try:
            value = ast.literal_eval(expr)
        except ValueError:
            if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
                return expr.attr  # np.float32 -> "float32", nl.exp -> "exp"
            raise _error(f"expected a literal, got `{ast.unparse(expr)}`", expr) from None
        try:
            hash(value)
        except TypeError:  # a list, dict or set: no attribute takes one
            raise _error(
                f"expected a number or a string, got the {type(value).__name__} `{ast.unparse(expr)}`", expr
            ) from None
        return value

    def _dtype(self, expr: ast.expr) -> str:
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            name = expr.attr
        elif isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            name = expr.value
        else:
            raise _error(f"expected a dtype such as np.float32, got `{ast.unparse(expr)}`", expr)
        try:  # an alias (bf16, fp32) reads as its dtype
            return resolve_dtype(name)
        except DtypeError:  # refused by the allocation's check, on its line
            return name

    def returns(self, node: ast.Return) -> tuple[str, ...]:
        value = node.value
        if isinstance(value, ast.Name):
            names = [value]
        elif isinstance(value, ast.Tuple) and all(isinstance(e, ast.Name) for e in value.elts):
            names = [e for e in value.elts if isinstance(e, ast.Name)]
        else:
            raise _error("expected `return <tensor>`", node)
        self.returned = names
        return tuple(name.id for name in names)

    # -- resolution -------------------------------------------------------------------
    def build(self, name: str, returns: tuple[str, ...], *, dtype: Dtypes, target: Target | str) -> Program:
        external_space = self._external_inputs()
        if self.check_params is not None:
            self.check_params(
                [v for v, space in external_space.items() if space != "output"],
                [v for v, space in external_space.items() if space == "output"],
            )
        for ret in self.returned:
            if not (ret.id in self.defined or ret.id in self.params or ret.id in self.allocated):
                raise _error(f"returns `{ret.id}`, which is not defined", ret)
        dtype_of = dtype_chooser(dtype, names=list(external_space))  # the parameters first
        param_shapes = self._infer_shapes(external_space)
        params = [Param(p, param_shapes[p], dtype_of(p)) for p in self.params]
        params += [
            Param(v, param_shapes[v], dtype_of(v), space)
            for v, space in external_space.items()
            if v not in self.params and space != "output"
        ]
        outputs = [
            Param(v, param_shapes[v], dtype_of(v)) for v, space in external_space.items() if space == "output"
        ]
        shapes: dict[str, tuple[int, ...]] = {p.name: p.shape for p in (*params, *outputs)}
        statements = []
        explicit = False
        for item in self.pending:
            if item.alloc_shape is not None:
                shapes[item.dst.var] = item.alloc_shape
                statements.append(
                    Statement(ALLOC, (Operand(item.dst.var, full(item.alloc_shape)),), item.attrs)
                )
                continue
            reads = [self._resolve(r, shapes) for r in item.reads]
            op = _fitting(item, [_extent(r.slices) for r in reads])
            for ref, operand in zip(item.reads, reads, strict=True):
                if (
                    ref.slices is not None
                    and ref.var in self.defined
                    and operand.slices == full(shapes[ref.var])
                ):
                    explicit = True
            if item.dst.slices is None:
                try:
                    out_shape = tuple(op.output_shape([_extent(r.slices) for r in reads], item.attrs))
                except ShapeError as err:
                    raise _error(str(err), item.node) from None
                shapes[item.dst.var] = out_shape
                dst = Operand(item.dst.var, full(out_shape))
            else:
                dst = self._resolve(item.dst, shapes)
            operands: list[Operand | None] = [None] * len(op.operand_names)
            for position, operand in zip(op.read_positions, reads, strict=True):
                operands[position] = operand
            operands[op.write_positions[0]] = dst
            complete = tuple(o for o in operands if o is not None)
            statements.append(Statement(op, complete, op.canonical_attrs(item.attrs), item.accumulate))
        try:
            return Program(
                name,
                params,
                statements,
                returns,
                target=get_target(target),
                outputs=outputs,
                fragment=self.fragment,
                explicit_slices=explicit,
            )
        except VerificationError as err:
            raise self._with_line(err) from None

    def _with_line(self, err: VerificationError) -> VerificationError:
        """``err`` naming the line of the statement it names, where one statement of the
        text writes that destination (else ``err`` as it is)."""
        if not err.statement:
            return err
        # `t[...] += op(...)` (an accumulation) or `t = ...`: the destination as written
        separator = " += " if " += " in err.statement else " = "
        target = err.statement.partition(separator)[0]
        written = [
            (
                item.node,
                ast.unparse(item.node.targets[0] if isinstance(item.node, ast.Assign) else item.node.target),
            )
            for item in self.pending
            if isinstance(item.node, ast.Assign | ast.AugAssign)
        ]
        exact = [node for node, dst in written if dst == target]
        if len(exact) > 1:  # e.g. a chain of accumulations into one tile
            exact = [node for node in exact if ast.unparse(node) == err.statement]
        # none: the destination may be written bare (`t += ...`), printed with slices (`t[0:128, 0:128]`)
        var, kind = target.partition("[")[0], ast.AugAssign if separator == " += " else ast.Assign
        candidates = exact or [node for node, dst in written if dst == var and isinstance(node, kind)]
        lines = {getattr(node, "lineno", 0) for node in candidates}
        if len(lines) != 1:
            return err
        message = str(err.args[0]).removeprefix(f"[{err.rule}] statement `{err.statement}`: ")
        return VerificationError(err.rule, f"line {lines.pop()}: {message}", err.statement)

    def _external_inputs(self) -> dict[str, str]:
        """Variables used but never defined: parameters, or (fragments) implicit ones."""
        found: dict[str, str] = {p: "hbm" for p in self.params}
        for item in self.pending:
            for ref in item.reads:
                if ref.var in self.defined or ref.var in self.allocated or ref.var in found:
                    continue
                if not self.fragment:
                    raise _error(f"`{ref.var}` is not defined", ref.node)
                found[ref.var] = "hbm" if item.op is LOAD else "sbuf"
            dst = item.dst
            if item.op is STORE and dst.var not in self.allocated and dst.var not in found:
                if not self.fragment:
                    raise _error(f"`{dst.var}` is stored into but never allocated", dst.node)
                found[dst.var] = "output"
        return found

    def _infer_shapes(self, external: Mapping[str, str]) -> dict[str, tuple[int, ...]]:
        unknown = sorted(set(self.shapes) - set(self.params)) if not self.fragment else []
        if unknown:  # a misspelt name would otherwise be ignored, its shape inferred
            names = ", ".join(repr(name) for name in unknown)
            raise ParseError(
                f"shapes: {names} {'is not a parameter' if len(unknown) == 1 else 'are not parameters'} "
                f"(parameters: {', '.join(self.params) or 'none'})"
            )
        shapes = {k: tuple(int(n) for n in v) for k, v in self.shapes.items()}
        extents: dict[str, list[int]] = {}
        for item in self.pending:
            refs = [*item.reads, item.dst] if item.op is STORE else item.reads
            for ref in refs:
                if ref.var in external and ref.var not in shapes:
                    if ref.slices is None or any(hi is None for _, hi in ref.slices):
                        raise _error(f"cannot infer the shape of `{ref.var}`: pass shapes=", ref.node)
                    stops = [hi for _, hi in ref.slices if hi is not None]
                    old = extents.setdefault(ref.var, stops)
                    if len(old) != len(stops):
                        raise _error(f"`{ref.var}` is indexed with different ranks", ref.node)
                    extents[ref.var] = [max(a, b) for a, b in zip(old, stops, strict=True)]
        for var in external:
            if var not in shapes:
                if var not in extents:
                    raise ParseError(f"cannot infer the shape of `{var}` (never sliced): pass shapes=")
                shapes[var] = tuple(extents[var])
        return shapes

    def _resolve(self, ref: _Ref, shapes: Mapping[str, tuple[int, ...]]) -> Operand:
        shape = shapes.get(ref.var)
        if shape is None:
            raise _error(f"`{ref.var}` is used before it is defined", ref.node)
        if ref.slices is None:
            return Operand(ref.var, full(shape))
        if len(ref.slices) != len(shape):
            raise _error(
                f"`{ref.var}` has {len(shape)} dimensions but is indexed with {len(ref.slices)}", ref.node
            )
        slices: Slices = tuple(
            (0 if lo is None else lo, size if hi is None else hi)
            for (lo, hi), size in zip(ref.slices, shape, strict=True)
        )
        return Operand(ref.var, slices)


def _fitting(item: _Pending, shapes: list[tuple[int, ...]]) -> Op:
    """The first of the statement's candidate ops whose shape rule accepts ``shapes``
    (``tensor_tensor(x, row)`` is the row form); the first candidate when none does (its
    verification names the problem)."""
    for op in item.alternatives or (item.op,):
        try:
            op.output_shape(shapes, item.attrs)
        except ShapeError:
            continue
        return op
    return item.op


def _extent(slices: Slices) -> tuple[int, ...]:
    return tuple(stop - start for start, stop in slices)
