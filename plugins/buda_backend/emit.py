"""Program -> Buda netlist: lift, lower, fuse, block, place, assemble, check.

1. :func:`.lift.lift` recovers the tensor-level dataflow from the tiled program;
2. :func:`.nodes.build_nodes` lowers each op to Buda micro-ops and folds transposes;
3. :func:`.fusion.plan_groups` groups nodes into graph ops, checking each grown group
   with the constraint checker, and keeping a node out of a fused op with a matmul when
   the timing model (:mod:`nkigym_graph.buda.timing`) says the fused op (on one column of
   cores) is slower than the two ops streaming into each other;
4. :func:`.opbuild.build_op` picks grid, blocks and (for fused ops) the schedules;
5. :func:`.placement.place` lays the ops on the worker grid (while they do not fit,
   halving the grid of the op the timing model finds fastest: the one with most slack);
6. the document is assembled, checked with ``check_netlist(..., strict=True)`` (any error
   or warning raises :class:`BudaEmitError` listing them: emitted netlists keep to the
   stricter reading of every rule) and written as YAML.

Steps 3 to 6 depend only on the nodes of step 2, the program's name and parameter names,
and the architecture: :attr:`Emitter.key`. Programs a search derives from one another
often lower to the same nodes (a rewrite that keeps every result's tile), so a cost model
can price one netlist per key.
"""

from __future__ import annotations

from typing import Any

import yaml

from nkigym_graph.buda import check_netlist, load_netlist
from nkigym_graph.buda.timing import OpPrice, price_netlist
from nkigym_graph.ir.program import Program
from nkigym_graph.plugin.protocols import Artifact
from nkigym_graph.stitching import check_circular_buffers, circular_buffers

from .arch import Arch
from .assemble import Assembled, assemble
from .constants import constant_of
from .errors import BudaEmitError
from .fusion import Plan, plan_groups
from .lift import lift
from .names import Names
from .nodes import NodeGraph, build_nodes
from .opbuild import BuiltOp, build_op
from .padding import check_padding
from .placement import place, shrink
from .stitched import stack_stitched
from .yaml_text import to_yaml

Pair = tuple[int, int]


class Emitter:
    """``program`` lifted and lowered to netlist nodes for ``arch`` (steps 1 and 2; raises
    :class:`BudaEmitError` naming what cannot be); :meth:`document` and :meth:`run` do the
    rest. ``key`` is what they depend on: emitters with equal keys give equal netlists (or
    raise equal errors)."""

    def __init__(self, program: Program, arch: Arch) -> None:
        self.program = program
        self.arch = arch
        self.graph_name = program.name or "graph"
        try:
            check_padding(program, (arch.intermed_df, arch.acc_df))
        except ValueError as err:
            raise BudaEmitError(str(err)) from None
        self.nodes: NodeGraph = build_nodes(stack_stitched(lift(program)))
        params = [p.name for p in program.params]
        labels = {n: node.label for n, node in self.nodes.nodes.items()}
        self.names = Names(params, list(self.nodes.outputs), labels)
        self.key = (program.name, tuple(params), arch, self.nodes.key)
        self._times: dict[tuple[object, ...], OpPrice] = {}

    def violations(self, op: BuiltOp) -> list[str]:
        alone = assemble(
            self.graph_name, [op], {op.name: (0, 0)}, self.nodes, self.names, self.arch, alone=True
        )
        return sorted({v.rule for v in check_netlist(alone.doc, self.arch.target, strict=True)})

    def legal(self, members: list[int], exit_node: int, joining: int) -> list[str]:
        built = self._build(members, exit_node, self.arch.worker_grid)
        broken = self.violations(built)
        if broken or built.fused is None or not any(s.get("type") == "matmul" for s in _subs(built.fused)):
            return broken
        rest = self._build([m for m in members if m != joining], exit_node, self.arch.worker_grid)
        alone = self._build([joining], joining, self.arch.worker_grid)
        fused, first, second = self.time(built), self.time(alone), self.time(rest)
        start = first.seconds / first.blocks
        streamed = max(start + second.seconds, first.seconds + second.seconds / second.blocks)
        return ["fusion.slower"] if fused.seconds > streamed else []

    def time(self, op: BuiltOp) -> OpPrice:
        """The timing model's price of ``op`` run on its own (kept by the members, exit and
        grid that make the op: placement asks for every op's again on each round)."""
        key = (op.members, op.exit, op.grid)
        found = self._times.get(key)
        if found is None:
            alone = assemble(
                self.graph_name, [op], {op.name: (0, 0)}, self.nodes, self.names, self.arch, alone=True
            )
            found = self._times[key] = price_netlist(load_netlist(alone.doc), self.arch.target).ops[0]
        return found

    def _build(self, members: list[int], exit_node: int, limit: Pair) -> BuiltOp:
        return build_op(self.nodes, members, exit_node, self.arch, self.names, limit)

    def placed(self, plan: Plan) -> tuple[list[BuiltOp], dict[str, Pair]]:
        worker = self.arch.worker_grid
        ops = [self._build(members, exit_node, worker) for members, exit_node in plan.groups]
        while True:
            locations = place([(op.name, op.grid) for op in ops], worker)
            if locations is not None:
                return ops, locations
            shrinkable = [i for i in range(len(ops)) if ops[i].cores > 1]
            if not shrinkable:
                raise BudaEmitError(
                    f"{len(ops)} graph ops do not fit on the {worker[0]}x{worker[1]} worker grid of "
                    f"{self.arch.name}; splitting a program over several graphs is not supported"
                )
            k = min(shrinkable, key=lambda i: self.time(ops[i]).seconds)
            op = ops[k]
            smaller = self._build(list(op.members), op.exit, shrink(op.grid))
            if self.violations(smaller):
                smaller = self._build(list(op.members), op.exit, (1, 1))
            ops[k] = smaller

    def document(self) -> tuple[Assembled, list[BuiltOp], Plan]:
        """The checked netlist as a map, its ops and the fusion plan."""
        plan = plan_groups(self.nodes, self.legal)
        ops, locations = self.placed(plan)
        assembled = assemble(self.graph_name, ops, locations, self.nodes, self.names, self.arch)
        found = check_netlist(assembled.doc, self.arch.target, strict=True)
        if found:
            raise BudaEmitError(
                f"the netlist emitted for {self.program.name} breaks {len(found)} rule(s)",
                violations=tuple(str(v) for v in found),
            )
        return assembled, ops, plan

    def run(self) -> Artifact:
        assembled, ops, plan = self.document()
        text = to_yaml(assembled.doc, self._header(assembled, ops))
        parsed = yaml.safe_load(text)
        return Artifact("buda", text, parsed, self._facts(assembled, ops, plan, parsed), ".yaml")

    def _header(self, assembled: Assembled, ops: list[BuiltOp]) -> list[str]:
        fused = sum(1 for op in ops if op.fused is not None)
        lines = [f"{self.program.name}: {len(ops)} graph op(s), {fused} fused, for {self.arch.name}."]
        for name, description in assembled.host_queues.items():
            lines.append(f"{name}: {_describe(description)}")
        return lines

    def _facts(self, assembled: Assembled, ops: list[BuiltOp], plan: Plan, parsed: Any) -> dict[str, Any]:
        facts: dict[str, Any] = {
            "arch": self.arch.name,
            "graph": self.graph_name,
            "ops": len(ops),
            "fused_ops": sum(1 for op in ops if op.fused is not None),
            "sub_ops": sum(op.sub_ops for op in ops if op.fused is not None),
            "queues": len(assembled.doc["queues"]),
            "host_queues": assembled.host_queues,
            "outputs": assembled.outputs,
            "params": {p.name: list(p.shape) for p in self.program.params},
            "fusion_splits": {self.nodes.nodes[n].label: rules for n, rules in plan.splits.items()},
        }
        facts.update(_circular_buffers(parsed, self.arch))
        return facts


def _subs(fused: dict[str, Any]) -> list[dict[str, Any]]:
    return [entry for schedule in fused["schedules"] for sub in schedule for entry in sub.values()]


def _describe(description: dict[str, Any]) -> str:
    if "param" in description:
        if description["transposed"]:
            return (
                f"parameter {description['param']} transposed by the host "
                "(nc_matmul's stationary operand is the netlist matmul's input 0 transposed)"
            )
        return f"parameter {description['param']}"
    return constant_of(description).text()


def _circular_buffers(parsed: Any, arch: Arch) -> dict[str, Any]:
    """Circular buffers of the busiest kernel (graph op)."""
    count = circular_buffers(parsed, arch.target)
    return {
        "circular_buffers": count.total,
        "circular_buffer_kernel": count.kernel,
        "circular_buffer_limit": count.limit,
        "circular_buffers_fit": count.fits,
    }


def netlist_document(program: Program, arch: Arch) -> dict[str, Any]:
    """The checked netlist ``program`` emits for ``arch``, as a map (no YAML text): what
    a cost model prices. Raises :class:`BudaEmitError` as :func:`emit_netlist` does."""
    assembled, _, _ = Emitter(program, arch).document()
    return assembled.doc


def emit_netlist(program: Program, arch: Arch, allow_over_limit: bool = False) -> Artifact:
    """The checked netlist artifact of ``program`` for ``arch``.

    A kernel needing more circular buffers than the architecture has is refused
    (``CircularBufferError`` naming the count and suggesting ``weight_stitch``) unless
    ``allow_over_limit``.
    """
    artifact = Emitter(program, arch).run()
    if not allow_over_limit:
        check_circular_buffers(artifact.parsed, arch.target)
    return artifact
