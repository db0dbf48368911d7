"""Union-find over named tensor axes: which axes of a traced function are one dimension.

Every dimension of every traced tensor is an axis with a name (``"a[axis 0]"``) and a
size. Ops join axes: ``nc_matmul`` joins the K axes of its two inputs, elementwise ops
join all axes of their inputs. Joining two axes of different sizes is a
``TilingError`` that names the op and both sizes.

>>> axes = AxisUnion()
>>> k0, k1 = axes.add("a[axis 0]", 256), axes.add("b[axis 0]", 256)
>>> axes.union(k0, k1, "nc_matmul: K of lhs and rhs")
>>> axes.find(k1) == axes.find(k0), axes.size(k1)
(True, 256)
"""

from __future__ import annotations

from nkigym_graph.errors import TilingError


class AxisUnion:
    """Disjoint sets of axes; every axis in a set has the same size."""

    __slots__ = ("_names", "_parent", "_sizes")

    def __init__(self) -> None:
        self._parent: list[int] = []
        self._sizes: list[int] = []
        self._names: list[str] = []

    def __len__(self) -> int:
        return len(self._parent)

    def add(self, name: str, size: int) -> int:
        """A new axis in a set of its own; returns its id."""
        axis = len(self._parent)
        self._parent.append(axis)
        self._sizes.append(size)
        self._names.append(name)
        return axis

    def find(self, axis: int) -> int:
        """The representative (smallest id) of ``axis``'s set."""
        parent = self._parent
        while parent[axis] != axis:
            parent[axis] = parent[parent[axis]]
            axis = parent[axis]
        return axis

    def size(self, axis: int) -> int:
        """The size shared by every axis in ``axis``'s set."""
        return self._sizes[axis]

    def name(self, axis: int) -> str:
        """The axis' own name (where it was created)."""
        return self._names[axis]

    def union(self, a: int, b: int, what: str) -> None:
        """Join the sets of ``a`` and ``b``; ``what`` says which op joins them, for errors."""
        size_a, size_b = self._sizes[a], self._sizes[b]
        if size_a != size_b:
            raise TilingError(
                f"{what}: size mismatch, {self._names[a]} has size {size_a} "
                f"but {self._names[b]} has size {size_b}"
            )
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            low, high = min(root_a, root_b), max(root_a, root_b)
            self._parent[high] = low

    def same(self, a: int, b: int) -> bool:
        """Whether ``a`` and ``b`` are one dimension."""
        return self.find(a) == self.find(b)

    def classes(self) -> dict[int, tuple[int, ...]]:
        """Every set as ``representative -> member axes`` (ascending ids)."""
        out: dict[int, list[int]] = {}
        for axis in range(len(self._parent)):
            out.setdefault(self.find(axis), []).append(axis)
        return {root: tuple(members) for root, members in out.items()}
