"""The NKI tensor: a numpy view of one allocation.

Indexing, ``reshape``, ``view(dtype)`` and ``ap(pattern)`` return views of the same
storage, never copies, so an instruction that writes its ``dst=`` view writes the
tensor. A tensor knows its allocation record (buffer, name, live range). PSUM storage
also carries one state byte per element for matmul accumulation:

``FRESH``  never written;   ``MATMUL`` last written by a matmul;
``MIXED``  written by a matmul, then by another instruction;
``OTHER``  written only by non-matmul instructions (memset, tensor_copy, ...).
"""

from __future__ import annotations

import math
from typing import Any, NoReturn

import numpy as np
from numpy.lib.stride_tricks import as_strided

from nkigym_graph.nki_sim.buffers import Buffer
from nkigym_graph.nki_sim.dtypes import dtype_name, to_dtype
from nkigym_graph.nki_sim.indexing import normalize_index
from nkigym_graph.nki_sim.memory import AllocRecord
from nkigym_graph.nki_sim.state import fail as _fail

FRESH, MATMUL, MIXED, OTHER = 0, 1, 2, 3
_AFTER_WRITE = np.array([OTHER, MIXED, MIXED, OTHER], dtype=np.uint8)

Array = np.ndarray[Any, Any]


def fail(rule: str, detail: str) -> NoReturn:
    _fail(rule, detail, outside="tensor view")


class Storage:
    """The owning arrays of one allocation (values and, for PSUM, state) and its record."""

    __slots__ = ("record", "state", "values")

    def __init__(self, values: Array, state: Array | None, record: AllocRecord) -> None:
        self.values = values
        self.state = state
        self.record = record


def address(arr: Array) -> int:
    """The memory address of an array's first element."""
    return int(arr.__array_interface__["data"][0])


class Tensor:
    """An NKI tensor (HBM, SBUF or PSUM). ``shape``, ``dtype`` and ``buffer`` as in NKI."""

    __slots__ = ("data", "psum_state", "storage")

    def __init__(self, storage: Storage, data: Array, psum_state: Array | None) -> None:
        self.storage = storage
        self.data = data
        self.psum_state = psum_state

    # -- NKI attributes ------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape)

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.data.dtype

    @property
    def buffer(self) -> Buffer:
        return self.storage.record.buffer

    @property
    def name(self) -> str:
        return self.storage.record.name

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def offset(self) -> int:
        """Element offset of this view from the start of its allocation."""
        return (address(self.data) - address(self.storage.values)) // self.data.itemsize

    def get_pattern(self) -> list[list[int]]:
        """The view's access pattern as ``[[step, num], ...]`` in elements."""
        size = self.data.itemsize
        return [[s // size, n] for s, n in zip(self.data.strides, self.data.shape, strict=True)]

    @property
    def record(self) -> AllocRecord:
        return self.storage.record

    # -- views ---------------------------------------------------------------------
    def _view(self, data: Array, state: Array | None) -> Tensor:
        return Tensor(self.storage, data, state)

    def __getitem__(self, key: Any) -> Tensor:
        index = normalize_index(key, self.shape, self.buffer.on_chip)
        state = self.psum_state[index] if self.psum_state is not None else None
        return self._view(self.data[index], state)

    def reshape(self, *shape: Any) -> Tensor:
        """A view with another shape over the same elements (no copy; partition dim kept)."""
        dims = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape
        new = tuple(int(d) for d in dims)
        if math.prod(new) != self.data.size:
            fail("view.reshape", f"cannot reshape {self.shape} to {new}: element count differs")
        if self.buffer.on_chip and new[0] != self.shape[0]:
            fail("view.reshape", f"reshape {self.shape} -> {new} changes the partition dim")
        data = self.data.view()
        state = self.psum_state.view() if self.psum_state is not None else None
        try:
            data.shape = new
            if state is not None:
                state.shape = new
        except AttributeError:
            fail("view.reshape", f"{self.shape} -> {new} is not a view of contiguous elements")
        return self._view(data, state)

    def view(self, dtype: Any) -> Tensor:
        """The same bytes read as another dtype (the last dim scales with the item size)."""
        target = to_dtype(dtype)
        if target is None:
            fail("alloc.dtype", f"{dtype!r} is not an NKI dtype")
        if self.psum_state is not None and target.itemsize != self.data.itemsize:
            fail("view.reshape", "a PSUM tensor can only be viewed as a same-size dtype")
        try:
            data = self.data.view(target)
        except ValueError as exc:
            fail(
                "view.reshape",
                f"cannot view {self.shape} {dtype_name(self.dtype)} as {dtype_name(target)}: {exc}",
            )
        return self._view(data, self.psum_state)

    def ap(self, pattern: Any, offset: int = 0, dtype: Any = None) -> Tensor:
        """An access-pattern view: ``pattern`` is ``[[step, num], ...]`` in elements, the
        first pair walking partitions; ``offset`` counts from this view's first element."""
        target = self.dtype if dtype is None else to_dtype(dtype)
        if target is None:
            fail("alloc.dtype", f"{dtype!r} is not an NKI dtype")
        try:
            pairs = [(int(step), int(num)) for step, num in pattern]
        except (TypeError, ValueError):
            fail("view.ap", f"pattern {pattern!r} is not a list of [step, num] pairs")
        if not pairs or any(num < 1 or step < 0 for step, num in pairs):
            fail("view.ap", f"pattern {pattern!r} needs pairs with step >= 0 and num >= 1")
        owner = self.storage.values
        size = target.itemsize
        start = address(self.data) - address(owner) + int(offset) * size
        extent = 1 + sum((num - 1) * step for step, num in pairs)
        if start < 0 or start + extent * size > owner.nbytes or start % size:
            fail(
                "view.ap",
                f"pattern {pairs} at offset {offset} leaves the {owner.nbytes}-byte "
                f"allocation {self.record.describe()}",
            )
        nums = tuple(num for _, num in pairs)
        limit = self.record.shape[0] if self.buffer.on_chip else None
        if limit is not None and (len(nums) < 2 or nums[0] > limit):
            fail(
                "view.ap",
                f"an on-chip access pattern needs a partition pair and at most "
                f"{limit} partitions, got {pairs}",
            )
        flat = owner.reshape(-1).view(np.uint8)[start : start + extent * size].view(target)
        data = as_strided(flat, shape=nums, strides=tuple(step * size for step, _ in pairs))
        state = None
        if self.storage.state is not None:
            if size != owner.itemsize:
                fail("view.ap", "a PSUM access pattern must keep the element size")
            first = start // size
            sflat = self.storage.state.reshape(-1)[first : first + extent]
            state = as_strided(sflat, shape=nums, strides=tuple(step for step, _ in pairs))
        return self._view(data, state)

    # -- old-style value semantics (nl.load / nl.matmul results) ----------------------
    def __setitem__(self, key: Any, value: Any) -> None:
        from nkigym_graph.nki_sim.values import assign

        assign(self, key, value)

    def __iadd__(self, other: Any) -> Tensor:
        from nkigym_graph.nki_sim.values import update_in_place

        return update_in_place(self, "add", other)

    def __isub__(self, other: Any) -> Tensor:
        from nkigym_graph.nki_sim.values import update_in_place

        return update_in_place(self, "subtract", other)

    def __imul__(self, other: Any) -> Tensor:
        from nkigym_graph.nki_sim.values import update_in_place

        return update_in_place(self, "multiply", other)

    def _binary(self, name: str, other: Any, reflected: bool = False) -> Tensor:
        from nkigym_graph.nki_sim.values import elementwise

        return elementwise(name, other, self) if reflected else elementwise(name, self, other)

    def __add__(self, other: Any) -> Tensor:
        return self._binary("add", other)

    def __radd__(self, other: Any) -> Tensor:
        return self._binary("add", other, reflected=True)

    def __sub__(self, other: Any) -> Tensor:
        return self._binary("subtract", other)

    def __rsub__(self, other: Any) -> Tensor:
        return self._binary("subtract", other, reflected=True)

    def __mul__(self, other: Any) -> Tensor:
        return self._binary("multiply", other)

    def __rmul__(self, other: Any) -> Tensor:
        return self._binary("multiply", other, reflected=True)

    def __truediv__(self, other: Any) -> Tensor:
        return self._binary("divide", other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return self._binary("divide", other, reflected=True)

    def __neg__(self) -> Tensor:
        return self._binary("multiply", -1.0)

    def __iter__(self) -> Any:
        raise TypeError("NKI tensors are not iterable; index them with slices")

    def __bool__(self) -> bool:
        raise TypeError(
            "an NKI tensor has no truth value: a kernel's control flow cannot depend on tile data "
            "(`if tile:` was always taken); compute on the data instead (nisa.tensor_tensor with a "
            "comparison, nisa.affine_select or a mask)"
        )

    def __repr__(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        label = f" {self.name!r}" if self.name else ""
        return f"<nki tensor{label} [{dims}] {dtype_name(self.dtype)} in {self.buffer!r}>"


def same_view(a: Tensor, b: Tensor) -> bool:
    """Whether two views are the same elements of the same allocation (``t[...] += u``
    assigns ``t``'s own view back to it)."""
    return (
        a.storage is b.storage
        and a.data.shape == b.data.shape
        and a.data.strides == b.data.strides
        and a.data.__array_interface__["data"] == b.data.__array_interface__["data"]
    )


def mark_written(tensor: Tensor) -> None:
    """Record a non-matmul write into a PSUM view (no-op elsewhere)."""
    state = tensor.psum_state
    if state is not None:
        state[...] = _AFTER_WRITE[state]


def touch(step: int, *tensors: Tensor) -> None:
    """Extend the live range of each operand's allocation to ``step``."""
    for tensor in tensors:
        tensor.storage.record.last = step
