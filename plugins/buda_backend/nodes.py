"""Netlist-level nodes: each tensor-level op with its micro-ops and what they read.

Operands resolve to *sources*: a parameter queue (:class:`ParamSource`), another node's
output (:class:`NodeSource`), a constant queue (:class:`ConstSource`), or an earlier
micro-op of the same node (:class:`Internal`).

Transposes fold into sources. ``nc_matmul``'s stationary operand is read transposed, and
``nc_transpose`` flips the flag of whatever reads it, so ``nc_matmul(nc_transpose(m), w)``
reads ``m`` as it is. A parameter read transposed is a queue the host fills with the
transposed array (``<name>_t``; see :mod:`.host`). A node's output read transposed needs a
``transpose`` TM on the reading graph op: a node with a single micro-op keeps the TM on its
own (then unfusable) graph op; otherwise a ``datacopy`` node with the TM is inserted
(fused ops cannot transpose, seed 004 "Not supported" 11).

An operand a lowering reads ``through`` a one-input op (``divide`` by a spread column
multiplies by its ``reciprocal``) reads a node of its own computing that op on the
operand as stored (once per operand and op), spread by the reader's TMs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from .constants import CONSTANT_TYPES, ColumnOnes, Constant
from .errors import BudaEmitError
from .layout import PLAIN, Layout
from .lowering import Arg, MicroSpec, Step, lower
from .tensor_graph import TensorGraph, TensorValue
from .walk import post_order

Shape = tuple[int, int]


@dataclass(frozen=True)
class ParamSource:
    """A parameter's queue; ``transposed``: the queue holds it transposed; ``layout``: the
    reading op repeats or stacks it (:mod:`.layout`)."""

    name: str
    transposed: bool
    shape: Shape
    """Shape as read (transposed when ``transposed``, after ``layout``)."""
    layout: Layout = PLAIN


@dataclass(frozen=True)
class NodeSource:
    """Another node's output; ``transposed``: read through a transpose TM, then ``layout``."""

    node: int
    transposed: bool
    shape: Shape
    """Shape as read (after the transpose and ``layout``)."""
    layout: Layout = PLAIN


@dataclass(frozen=True)
class ConstSource:
    """A constant spread over an operand of ``shape``."""

    constant: Constant
    shape: Shape


@dataclass(frozen=True)
class Internal:
    """Micro-op ``step`` of node ``node``."""

    node: int
    step: int


Source = ParamSource | NodeSource | ConstSource
Ref = Source | Internal


@dataclass(frozen=True)
class Micro:
    """One Buda op of a node (hashable, like every part of a :class:`Node`)."""

    node: int
    step: int
    type: str
    inputs: tuple[Ref, ...]
    attributes: tuple[tuple[str, Any], ...]
    """``(name, value)`` pairs, in the order the netlist writes them."""
    shape: Shape

    @property
    def ref(self) -> Internal:
        return Internal(self.node, self.step)


@dataclass(frozen=True)
class Node:
    """A tensor-level op as netlist micro-ops (the last one gives its result)."""

    id: int
    label: str
    micros: tuple[Micro, ...]
    tile: Shape
    """The program's tile shape for this result (grid hint)."""

    @property
    def result(self) -> Micro:
        return self.micros[-1]

    @property
    def shape(self) -> Shape:
        return self.result.shape

    @property
    def transposed_reads(self) -> bool:
        """Reads another node's output through a transpose TM (so it stays a plain op)."""
        return any(isinstance(r, NodeSource) and r.transposed for r in self.refs())

    def refs(self) -> Iterator[Ref]:
        for micro in self.micros:
            yield from micro.inputs

    def reads(self) -> set[int]:
        """Ids of the nodes it reads."""
        return {r.node for r in self.refs() if isinstance(r, NodeSource)}


@dataclass
class NodeGraph:
    """Nodes in topological order, the program outputs and the parameter shapes."""

    nodes: dict[int, Node]
    outputs: dict[str, int]
    params: dict[str, Shape]
    consumers: dict[int, set[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.consumers = {n: set() for n in self.nodes}
        for node in self.nodes.values():
            for source in node.reads():
                self.consumers[source].add(node.id)

    @property
    def key(self) -> tuple[object, ...]:
        """The graph as a hashable value, in order (nodes, outputs, parameters): graphs with
        equal keys emit the same netlist."""
        return (tuple(self.nodes.values()), tuple(self.outputs.items()), tuple(self.params.items()))


def _resolve(graph: TensorGraph, value_id: int, transposed: bool, layout: Layout = PLAIN) -> Source:
    value = graph[value_id]
    if value.op is not None and value.op.name == "nc_transpose":
        return _resolve(graph, value.inputs[0], not transposed, layout)
    if value.view is not None:
        raise BudaEmitError(
            f"weight {value.name} of stitched {value.view.param} is read on its own", value.statement
        )
    rows, cols = value.shape
    try:
        shape = layout.read_shape((cols, rows) if transposed else (rows, cols))
    except ValueError as err:
        raise BudaEmitError(f"{value.name}: {err}", value.statement) from None
    if value.is_param:
        return ParamSource(value.name, transposed, shape, layout)
    return NodeSource(value.id, transposed, shape, layout)


def _micro_shape(spec: MicroSpec, shapes: list[Shape | None]) -> Shape:
    known = [s for s in shapes if s is not None]
    if spec.type == "matmul":
        (m, k), (k2, n) = shapes[0] or (0, 0), shapes[1] or (0, 0)
        if k != k2:
            raise ValueError(f"matmul inner sizes differ: {k} and {k2}")
        return (m, n)
    if spec.type == "reduce":
        return (known[0][0], 1)
    return known[0]


def _constant_shape(constant: Constant, out: Shape) -> Shape:
    return (constant.rows, 1) if isinstance(constant, ColumnOnes) else out


Through = Callable[[Source, str, Layout], NodeSource]
"""``(operand as stored, one-input op, layout) -> the op's result read with the layout``."""


def _node(graph: TensorGraph, value: TensorValue, through: Through) -> Node:
    assert value.op is not None
    shapes = [graph[i].shape for i in value.inputs]
    try:
        specs = lower(value.op.name, value.attr_map, shapes)
    except ValueError as err:
        raise BudaEmitError(f"{value.name}: {err}", value.statement) from None
    micros: list[Micro] = []
    for step, spec in enumerate(specs):
        refs: list[Ref | Constant] = []
        for item in spec.inputs:
            if isinstance(item, Arg) and item.through is not None:
                stored = _resolve(graph, value.inputs[item.index], item.transposed)
                refs.append(through(stored, item.through, item.layout))
            elif isinstance(item, Arg):
                refs.append(_resolve(graph, value.inputs[item.index], item.transposed, item.layout))
            elif isinstance(item, Step):
                refs.append(micros[item.index].ref)
            else:
                refs.append(item)
        in_shapes = [_ref_shape(r, micros) for r in refs]
        try:
            out = _micro_shape(spec, in_shapes)
        except ValueError as err:
            raise BudaEmitError(f"{value.name}: {err}", value.statement) from None
        inputs = tuple(
            ConstSource(r, _constant_shape(r, out)) if isinstance(r, CONSTANT_TYPES) else r for r in refs
        )
        micros.append(Micro(value.id, step, spec.type, inputs, spec.attributes, out))
    return Node(value.id, value.name, tuple(micros), value.tile)


def _ref_shape(ref: Ref | Constant, micros: list[Micro]) -> Shape | None:
    if isinstance(ref, Internal):
        return micros[ref.step].shape
    if isinstance(ref, ParamSource | NodeSource):
        return ref.shape
    if isinstance(ref, ColumnOnes):
        return (ref.rows, 1)
    return None


def _unary_node(node_id: int, source: Source, kind: str, label: str, tile: Shape) -> Node:
    micro = Micro(node_id, 0, kind, (source,), (), source.shape)
    return Node(node_id, label, (micro,), tile)


class _Builder:
    def __init__(self, graph: TensorGraph) -> None:
        self.graph = graph
        self.nodes: dict[int, Node] = {}
        self.transposes: dict[int, int] = {}
        self.helpers: dict[tuple[Source, str], int] = {}
        self.next_id = len(graph.values)

    def run(self) -> NodeGraph:
        graph = self.graph
        for value in graph.computed():
            assert value.op is not None
            if value.op.name != "nc_transpose":
                self.nodes[value.id] = _node(graph, value, self._through)
        for node in list(self.nodes.values()):
            if node.transposed_reads and len(node.micros) > 1:
                self.nodes[node.id] = self._materialize(node)
        outputs = {name: self._output(name, value) for name, value in graph.outputs.items()}
        params = {v.name: v.shape for v in graph.values if v.is_param}
        return NodeGraph(_reachable(self.nodes, outputs.values()), outputs, params)

    def _transpose_of(self, source: NodeSource) -> NodeSource:
        """Read ``source`` from a copy that transposes it (the layout stays on the reader)."""
        made = self.transposes.get(source.node)
        if made is None:
            plain = replace(source, shape=source.layout.stored_shape(source.shape), layout=PLAIN)
            made = self.transposes[source.node] = self._new_copy(plain, "transpose")
        return NodeSource(made, False, source.shape, source.layout)

    def _through(self, source: Source, kind: str, layout: Layout) -> NodeSource:
        """``source`` (as stored) read through a node computing ``kind`` of it, then ``layout``."""
        made = self.helpers.get((source, kind))
        if made is None:
            made = self.helpers[(source, kind)] = self._new_copy(source, kind, op=kind)
        return NodeSource(made, False, layout.read_shape(source.shape), layout)

    def _new_copy(self, source: Source, kind: str, op: str = "datacopy") -> int:
        """A node computing ``op`` of ``source`` (a copy by default), labelled ``kind``."""
        node_id, self.next_id = self.next_id, self.next_id + 1
        tile: Shape = (0, 0)
        if isinstance(source, NodeSource):
            tile = self.nodes[source.node].tile
            tile = (tile[1], tile[0]) if source.transposed else tile
        self.nodes[node_id] = _unary_node(node_id, source, op, f"{kind}_{node_id}", tile)
        return node_id

    def _materialize(self, node: Node) -> Node:
        def fix(ref: Ref) -> Ref:
            return self._transpose_of(ref) if isinstance(ref, NodeSource) and ref.transposed else ref

        micros = tuple(replace(m, inputs=tuple(fix(r) for r in m.inputs)) for m in node.micros)
        return replace(node, micros=micros)

    def _output(self, name: str, value_id: int) -> int:
        source = _resolve(self.graph, value_id, False)
        if isinstance(source, NodeSource) and not source.transposed:
            return source.node
        return self._new_copy(source, "copy")


def _reachable(nodes: dict[int, Node], roots: Iterable[int]) -> dict[int, Node]:
    """The nodes the outputs depend on, inputs first."""
    order = post_order(roots, lambda node_id: sorted(nodes[node_id].reads()))
    return {node_id: nodes[node_id] for node_id in order}


def build_nodes(graph: TensorGraph) -> NodeGraph:
    """The netlist nodes of a lifted program (see the module docstring)."""
    return _Builder(graph).run()
