"""Tracing: running a user's function once on symbolic tensors to record its op calls.

A ``Trace`` hands out one ``TracedTensor`` per parameter; each op function called on
traced tensors appends a ``Call`` and returns a new traced tensor. Axes are joined as
the calls are recorded, by the op's own axis labels (``op.axes``): within one call,
equal labels are one dimension (``nc_matmul``'s ``K`` of lhs and rhs), a label of the
destination reuses the input axis of that label (``nc_transpose`` swaps
``partition``/``free``), and a destination label no input carries is a new axis (the
size-1 axis of ``tensor_reduce``). Input labels the destination lacks are reduced
over (``K``; the reduced ``free`` axis), except ``BROADCAST``: a broadcast operand's
size-1 dimension joins nothing and is spread, not reduced. So a size mismatch is
reported at the call that causes it.

>>> from nkigym_graph.ir.ops import NC_MATMUL
>>> trace = Trace()
>>> a, b = trace.param("a", (256, 128)), trace.param("b", (256, 512))
>>> trace.record(NC_MATMUL, (a, b), ()).shape
(128, 512)
"""

from __future__ import annotations

from typing import Any, NoReturn

from nkigym_graph.errors import TilingError
from nkigym_graph.ir.ops.base import BROADCAST, Op, ShapeError
from nkigym_graph.ir.statement import Attrs
from nkigym_graph.tiling.axes import AxisUnion


class Call:
    """One recorded op application: ``op(*inputs, **attrs)``, the ``index``-th of its trace."""

    __slots__ = ("attrs", "index", "inputs", "op", "out_axes", "reduced")

    def __init__(
        self,
        op: Op,
        inputs: tuple[TracedTensor, ...],
        attrs: Attrs,
        index: int,
        out_axes: tuple[int, ...],
        reduced: tuple[int, ...],
    ) -> None:
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.index = index
        self.out_axes = out_axes
        """The destination's axes."""
        self.reduced = reduced
        """Axes the call reduces over (input labels its destination lacks)."""

    def describe(self) -> str:
        """``nc_matmul (call 2)``: how errors name the call."""
        return f"{self.op.name} (call {self.index})"


class TracedTensor:
    """A symbolic 2-D tensor: a function parameter or the result of a recorded call."""

    __slots__ = ("axes", "source", "trace")

    def __init__(self, trace: Trace, axes: tuple[int, ...], source: str | Call) -> None:
        self.trace = trace
        self.axes = axes
        """Axis ids in the trace's ``AxisUnion``, one per dimension."""
        self.source = source
        """The parameter name, or the call that produced it."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The tensor's shape."""
        return tuple(self.trace.axes.size(a) for a in self.axes)

    @property
    def ndim(self) -> int:
        """Number of dimensions (always 2)."""
        return len(self.axes)

    def describe(self) -> str:
        """The parameter name, or ``the result of nc_matmul (call 0)``."""
        if isinstance(self.source, str):
            return self.source
        return f"the result of {self.source.describe()}"

    def __repr__(self) -> str:
        return f"<TracedTensor {self.describe()} shape={self.shape}>"

    # -- clear errors for what tracing cannot record ------------------------------------
    def _unsupported(self, what: str) -> NoReturn:
        raise TilingError(
            f"{what} is not supported on traced tensor {self.describe()}; use the nkigym op "
            'functions (nc_matmul, nc_transpose, activation, tensor_tensor(x, y, op="add"), '
            'tensor_scalar(x, s, op="multiply"), tensor_reduce)'
        )

    def __array__(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._unsupported("conversion to a numpy array")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> NoReturn:
        self._unsupported(f"numpy function {getattr(ufunc, '__name__', ufunc)}")

    def __getitem__(self, key: Any) -> NoReturn:
        self._unsupported("indexing")

    def __bool__(self) -> NoReturn:
        self._unsupported("truth testing")

    def __iter__(self) -> NoReturn:
        self._unsupported("iteration")

    def _operator(self, *args: Any) -> NoReturn:
        self._unsupported("an arithmetic operator")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _operator
    __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = __neg__ = __pow__ = _operator

    def _comparison(self, other: object) -> NoReturn:
        self._unsupported("comparison (==, <, ...)")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _comparison
    __hash__ = object.__hash__
    """Hashed by identity, so a traced tensor can key a dict or sit in a set (their
    lookups compare by identity first; distinct tensors' hashes differ)."""


class Trace:
    """The record of one run of a user function on traced tensors."""

    __slots__ = ("axes", "calls", "params")

    def __init__(self) -> None:
        self.axes = AxisUnion()
        self.params: dict[str, TracedTensor] = {}
        self.calls: list[Call] = []

    def param(self, name: str, shape: tuple[int, ...]) -> TracedTensor:
        """The traced tensor of parameter ``name``."""
        axes = tuple(self.axes.add(f"{name}[axis {d}]", size) for d, size in enumerate(shape))
        tensor = TracedTensor(self, axes, name)
        self.params[name] = tensor
        return tensor

    def record(self, op: Op, inputs: tuple[TracedTensor, ...], attrs: Attrs) -> TracedTensor:
        """Append ``op(*inputs, **attrs)``; join axes by label (see the module docstring)."""
        call_index = len(self.calls)
        what = f"{op.name} (call {call_index})"
        for tensor in inputs:
            if tensor.trace is not self:
                raise TilingError(f"{what}: operand {tensor.describe()} belongs to another trace")
        by_label: dict[str, int] = {}
        first_operand: dict[str, str] = {}
        for position, tensor in zip(op.read_positions, inputs, strict=True):
            labels, operand = op.axes[position], op.operand_names[position]
            if len(labels) != tensor.ndim:
                raise TilingError(
                    f"{what}: operand {operand} must have {len(labels)} "
                    f"dimensions, {tensor.describe()} has shape {tensor.shape}"
                )
            for label, axis in zip(labels, tensor.axes, strict=True):
                if label == BROADCAST:
                    continue
                known = by_label.get(label)
                if known is None:
                    by_label[label] = axis
                    first_operand[label] = operand
                else:
                    where = f"{what}, axis {label} of {first_operand[label]} and {operand}"
                    self.axes.union(known, axis, where)
        try:
            shape = op.output_shape([t.shape for t in inputs], attrs)
        except ShapeError as err:
            raise TilingError(f"{what}: {err}") from None
        dst_labels = op.axes[op.write_positions[0]]
        out_axes = []
        for d, label in enumerate(dst_labels):
            known = by_label.get(label)
            if known is None:
                known = self.axes.add(f"{what} result[axis {d}]", shape[d])
            out_axes.append(known)
        reduced = tuple(axis for label, axis in by_label.items() if label not in dst_labels)
        call = Call(op, inputs, attrs, call_index, tuple(out_axes), reduced)
        self.calls.append(call)
        return TracedTensor(self, call.out_axes, call)
