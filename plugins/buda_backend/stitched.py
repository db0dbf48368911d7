"""Stitched weights in a netlist: the sum of ``x @ w_i`` over a stitched tensor is one matmul.

``weight_stitch`` puts weights ``w_1 .. w_N`` side by side in one parameter so a kernel
reads them through one input (one circular buffer), each matmul at its own columns. A
Buda netlist cannot give an op a column range of an input: its TMs (``broadcast``,
``tile_broadcast``, ``transpose``, ``hslice``/``hstack``/``vslice``/``vstack``, ``pad``)
repeat or rearrange whole tiles and never drop any, ``splice`` is a graph op of its own
that cannot be fused, and one queue per weight (or an aliased view per weight) is one
input, hence one buffer, per weight again.

What a netlist can do with the stitched queue as it is: read its ``N`` equal column
blocks stacked in rows (``hslice: N`` then ``vstack: N``, see :mod:`.layout`). Against
``x`` repeated ``N`` times side by side (``broadcast: {c: N}``) that is one matmul::

    [x | ... | x] @ [w_1; ...; w_N] = x @ w_1 + ... + x @ w_N

So the backend emits a stitched parameter whose weights all feed one sum of matmuls with
the same ``x`` (an add tree whose inner sums are read by nothing else) as that single
matmul: one input queue and one input buffer for all the weights. Any other use of a
stitched weight (its product read on its own, two different ``x``, weights of different
widths or heights) is refused with :class:`BudaEmitError` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .errors import BudaEmitError
from .tensor_graph import TensorGraph, TensorValue, WeightView, with_consumers

STACKED = "stacked"
"""Attribute of an ``nc_matmul`` value reading its rhs as that many stacked column blocks."""

WHY = (
    "a Buda netlist cannot read a column range of one input (its TMs repeat or rearrange whole "
    "tiles, splice cannot be fused), so the backend reads a stitched parameter only as the "
    "stacked weight of one matmul: the sum of nc_matmul(x, w) over all its weights with one x; "
    "emit the program before weight_stitch"
)


@dataclass(frozen=True)
class _Sum:
    """An add tree summing matmuls: its root, every member, and the matmuls (leaves)."""

    root: int
    members: frozenset[int]
    leaves: tuple[int, ...]


def _is_add(value: TensorValue) -> bool:
    return value.op is not None and value.op.name == "tensor_tensor" and value.attr_map.get("op") == "add"


def _reads_as_rhs(value: TensorValue, weight: int) -> bool:
    """``value`` is a plain ``nc_matmul`` reading ``weight`` as its rhs only."""
    is_matmul = value.op is not None and value.op.name == "nc_matmul" and not value.attrs
    return is_matmul and value.inputs[1] == weight != value.inputs[0]


class _Stacker:
    def __init__(self, graph: TensorGraph) -> None:
        self.graph = graph
        self.outputs = set(graph.outputs.values())
        self.params = {v.name: v.id for v in graph.values if v.is_param and v.view is None}

    def readers(self, value_id: int) -> tuple[int, ...]:
        return self.graph.consumers.get(value_id, ())

    def weights_of(self) -> dict[str, list[TensorValue]]:
        found: dict[str, list[TensorValue]] = {}
        for value in self.graph.values:
            if value.view is not None:
                found.setdefault(value.view.param, []).append(value)
        return found

    def refuse(
        self, param: str, weights: list[TensorValue], problem: str, statement: str = ""
    ) -> BudaEmitError:
        names = ", ".join(f"{w.name} (columns {_text(w.view)})" for w in weights)
        return BudaEmitError(f"stitched parameter {param} ({names}): {problem}; {WHY}", statement)

    def not_summed(self, value_id: int) -> str:
        """Why ``value_id`` is not only added into a larger sum ('' when it is)."""
        value, readers = self.graph[value_id], self.readers(value_id)
        if value_id in self.outputs:
            return f"{value.name} is a program output"
        if len(readers) != 1:
            return f"{value.name} is read by {len(readers)} ops, not only by the sum of the products"
        reader = self.graph[readers[0]]
        if not _is_add(reader):
            kind = " ".join(
                str(k) for k in (reader.op.name if reader.op else "", reader.attr_map.get("op")) if k
            )
            return f"{value.name} is read by {reader.name} ({kind}), which is not an add"
        return ""

    def sum_of(self, param: str, weights: list[TensorValue]) -> _Sum:
        """The add tree over the matmuls of ``param``'s weights: one matmul per weight, summed
        together and with nothing else, each partial sum read only by the next add."""
        graph = self.graph
        leaves: list[int] = []
        for weight in weights:
            readers = [graph[r] for r in self.readers(weight.id)]
            if len(readers) != 1 or not _reads_as_rhs(readers[0], weight.id):
                raise self.refuse(
                    param,
                    weights,
                    f"weight {weight.name} is not read by exactly one nc_matmul as its rhs",
                    readers[0].statement if readers else "",
                )
            leaves.append(readers[0].id)
        root = leaves[0]
        while not set(leaves) <= _tree(graph, root):
            problem = self.not_summed(root)
            if problem:
                raise self.refuse(param, weights, problem, graph[root].statement)
            root = self.readers(root)[0]
        members = _tree(graph, root)
        for member in sorted(members):
            value = graph[member]
            if _is_add(value) and len(set(value.inputs)) != 2:
                raise self.refuse(param, weights, f"{value.name} adds a value to itself", value.statement)
            if not _is_add(value) and member not in leaves:
                raise self.refuse(
                    param, weights, f"the sum of its products also adds {value.name}", graph[root].statement
                )
            problem = self.not_summed(member) if member != root else ""
            if problem:
                raise self.refuse(param, weights, problem, value.statement)
        return _Sum(root, frozenset(members), tuple(leaves))

    def check(self, param: str, weights: list[TensorValue], found: _Sum) -> int:
        """The common ``x`` of the sum's matmuls, after checking the weights stack."""
        graph = self.graph
        statement = graph[found.root].statement
        lhs = {graph[m].inputs[0] for m in found.leaves}
        if len(lhs) != 1:
            raise self.refuse(param, weights, "its weights multiply different x", statement)
        shapes = sorted({w.shape for w in weights})
        if len(shapes) != 1:
            raise self.refuse(param, weights, f"its weights have different shapes {shapes}", statement)
        rows = graph[self.params[param]].shape[0]
        if rows != shapes[0][0]:
            raise self.refuse(
                param,
                weights,
                f"its weights have {shapes[0][0]} rows, the stitched tensor {rows} "
                "(the stacked blocks would include its zero rows)",
                statement,
            )
        return lhs.pop()

    def run(self) -> TensorGraph:
        replaced: dict[int, TensorValue] = {}
        dropped: set[int] = set()
        for param, weights in self.weights_of().items():
            found = self.sum_of(param, weights)
            x = self.check(param, weights, found)
            root = self.graph[found.root]
            leaf = self.graph[found.leaves[0]]
            assert leaf.op is not None
            replaced[root.id] = replace(
                root,
                name=f"{leaf.op.name}_{root.id}",
                op=leaf.op,
                attrs=((STACKED, len(weights)),),
                inputs=(x, self.params[param]),
            )
            dropped |= (found.members - {root.id}) | {w.id for w in weights}
        if not replaced:
            return self.graph
        return _compact(self.graph, replaced, dropped)


def _tree(graph: TensorGraph, root: int) -> set[int]:
    """``root`` and the add tree under it (adds, and the non-add values they read)."""
    seen = {root}
    stack = [root]
    while stack:
        value = graph[stack.pop()]
        if not _is_add(value):
            continue
        for source in value.inputs:
            if source not in seen:
                seen.add(source)
                stack.append(source)
    return seen


def _compact(graph: TensorGraph, replaced: dict[int, TensorValue], dropped: set[int]) -> TensorGraph:
    """The graph with ``replaced`` values swapped in and ``dropped`` ones removed (ids renumbered)."""
    kept = [replaced.get(v.id, v) for v in graph.values if v.id not in dropped]
    new_id = {v.id: k for k, v in enumerate(kept)}
    values = tuple(replace(v, id=new_id[v.id], inputs=tuple(new_id[i] for i in v.inputs)) for v in kept)
    return with_consumers(values, {name: new_id[v] for name, v in graph.outputs.items()})


def _text(view: WeightView | None) -> str:
    assert view is not None
    return f"{view.columns[0]}:{view.columns[1]}"


def stack_stitched(graph: TensorGraph) -> TensorGraph:
    """``graph`` with the sum over each stitched parameter's weights as one stacked matmul
    (see the module docstring); BudaEmitError names a stitched weight used otherwise."""
    return _Stacker(graph).run()
