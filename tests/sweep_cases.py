"""The table of the argument sweep: one valid call of each public function.

``CASES`` maps a name to ``(function, args, kwargs)``; the sweep replaces one argument
at a time with a wrong-typed value. Arguments are small, so every call is quick.
``EXCLUDED`` lists the exported callables deliberately left out, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from stitching.stitch_programs import W, weights_program

import nkigym_graph as ng
from nkigym_graph import nki_sim
from nkigym_graph.ir.synthetic import tiled_matmul

Case = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]

ROOT = tiled_matmul(128, 128, 256)
MATCH = ng.analyze(ROOT, "data_reuse")[0]
TT = tiled_matmul(64, 64, 64, tile=32, target=ng.WORMHOLE_B0)
NETLIST = ng.emit_artifact(TT, backend="buda", arch="wormhole_b0").text
NETLIST_INPUTS = {p.name: np.ones(p.shape, np.float32) for p in TT.params}
WEIGHTS = weights_program([W("w1", 64, 32), W("w2", 64, 64)])
STITCHED_PROGRAM = ng.apply(WEIGHTS, "weight_stitch", ng.analyze(WEIGHTS, "weight_stitch")[0])
(STITCH_META,) = ng.stitching_of(STITCHED_PROGRAM).values()
STITCHED_ARRAY, _ = ng.stitch_weights([("w1", np.ones((64, 32))), ("w2", np.ones((64, 64)))])
ARRAYS = {"a": np.ones((128, 128), np.float32), "b": np.ones((128, 256), np.float32)}
KERNEL = ng.emit(ROOT, backend="nki")
X = np.ones((128, 128), np.float32)
SHAPES = {"a": (128, 128), "b": (128, 256)}
LIMITS = ng.NetlistLimits()


def _matmul(a: Any, b: Any) -> Any:
    return ng.nc_matmul(a, b)


class EmptyPlugin:
    """A plugin adding no transforms."""

    @ng.hookimpl
    def nkigym_graph_register_transforms(self) -> list[Any]:
        return []


def cases(tmp: Path) -> dict[str, Case]:
    """Every swept function with one valid call (files go under ``tmp``)."""
    program_file = ng.write_program(ROOT, tmp / "root.nkg")
    return {
        "activation": (ng.activation, (X,), {"op": "tanh"}),
        "analyze": (ng.analyze, (ROOT, "data_reuse"), {}),
        "apply": (ng.apply, (ROOT, "data_reuse", MATCH), {}),
        "check_circular_buffers": (ng.check_circular_buffers, (TT, "wormhole_b0"), {}),
        "check_netlist": (ng.check_netlist, (NETLIST, "wormhole_b0"), {"ignore": (), "limits": LIMITS}),
        "circular_buffers": (ng.circular_buffers, (TT, "wormhole_b0"), {}),
        "compile_time_args": (ng.compile_time_args, (STITCH_META, 0), {"target": ng.WORMHOLE_B0}),
        "emit": (ng.emit, (ROOT, "nki", "trn2"), {}),
        "emit_artifact": (ng.emit_artifact, (TT, "buda", "wormhole_b0"), {"arch": "wormhole_b0"}),
        "estimate": (ng.estimate, (ROOT, "trn2"), {}),
        "evaluate_netlist": (ng.evaluate_netlist, (NETLIST, NETLIST_INPUTS), {"limits": LIMITS}),
        "explain": (ng.explain, (ROOT, "data_reuse", *MATCH.nodes), {}),
        "find_weights": (ng.find_weights, (WEIGHTS,), {}),
        "get_op": (ng.get_op, ("nc_matmul",), {}),
        "kernel_plan": (ng.kernel_plan, (ROOT.with_schedule("order=M,N"),), {"overflowing": False}),
        "get_target": (ng.get_target, ("trn2",), {}),
        "get_transform": (ng.get_transform, ("data_reuse",), {}),
        "interpret": (ng.interpret, (ROOT, np.float64), {"max_bytes": 1 << 30, **ARRAYS}),
        "load_netlist": (ng.load_netlist, (NETLIST,), {"limits": LIMITS}),
        "matches_of": (ng.matches_of, (ROOT, "data_reuse"), {}),
        "nc_matmul": (ng.nc_matmul, (X, X), {}),
        "nc_transpose": (ng.nc_transpose, (X,), {}),
        "parse_fragment": (
            ng.parse_fragment,
            ("tensor_0 = a[0:128, 0:128]\n", {"a": (128, 128)}),
            {"name": "f", "dtype": "float32", "target": "trn2"},
        ),
        "parse_program": (ng.parse_program, (str(ROOT), SHAPES), {"dtype": "float32", "target": "trn2"}),
        "read_program": (ng.read_program, (program_file,), {}),
        "register_plugin": (ng.register_plugin, (EmptyPlugin(), "sweep_plugin"), {}),
        "replay": (ng.replay, (ROOT, [("data_reuse", 0)], None), {}),
        "saturate": (ng.saturate, (ROOT, ["data_reuse"]), {"check": False, "seed": 0}),
        "saturate_steps": (ng.saturate_steps, (ROOT, ["data_reuse"]), {}),
        "search": (
            ng.search,
            (ROOT, ["data_reuse"], "greedy", 2, 0, "trn2", None, "sampled", False),
            {"workers": None, "samples": 2, "memo_bytes": 1 << 20, "confirm": False},
        ),
        "stitch_inputs": (ng.stitch_inputs, (STITCHED_PROGRAM, {"x": np.ones((64, 32)), **_weights()}), {}),
        "stitch_program": (ng.stitch_program, (WEIGHTS, ["w1", "w2"]), {}),
        "stitch_weights": (ng.stitch_weights, (list(_weights().items()), (1, 32), None, "width_sharded"), {}),
        "stitching_of": (ng.stitching_of, (STITCHED_PROGRAM,), {}),
        "tensor_reduce": (ng.tensor_reduce, (X,), {"op": "sum"}),
        "affine_select": (
            ng.affine_select,
            (X,),
            {"offset": 0, "step": -1, "cmp": "greater_equal", "fill": -1e9},
        ),
        "tensor_scalar": (ng.tensor_scalar, (X, 2.0), {"op": "multiply"}),
        "tensor_tensor": (ng.tensor_tensor, (X, X), {"op": "add"}),
        "tile": (
            ng.tile,
            (_matmul, {"a": (128, 128), "b": (128, 128)}, "float32", "trn2"),
            {"max_statements": 100},
        ),
        "to_dot": (ng.to_dot, (ROOT, "auto"), {"collapse": True}),
        "to_dot_diff": (ng.to_dot_diff, (ROOT, ROOT, "auto"), {"collapse": True}),
        "unregister_plugin": (ng.unregister_plugin, (EmptyPlugin(),), {}),
        "unstitch": (ng.unstitch, (STITCHED_ARRAY, STITCH_META), {}),
        "write_dot": (ng.write_dot, (ROOT, tmp / "p.dot", "auto"), {"collapse": True}),
        "write_program": (ng.write_program, (ROOT, tmp / "p.nkg"), {}),
        "NetlistLimits": (ng.NetlistLimits, (), {"grid": 14, "t": 64, "block": 64, "total_tiles": 256}),
        "Program": (
            ng.Program,
            (ROOT.name, ROOT.params, ROOT.statements, ROOT.returns),
            {"target": "trn2", "outputs": ROOT.outputs, "fragment": False, "explicit_slices": False},
        ),
        "nki_sim.simulate": (
            nki_sim.simulate,
            (KERNEL, ARRAYS["a"], ARRAYS["b"]),
            {
                "target": "trn2",
                "kernel_name": None,
                "report": False,
                "max_instructions": 10_000,
                "timeout": 30.0,
            },
        ),
        "nki_sim.profile": (
            nki_sim.profile,
            (KERNEL, ARRAYS["a"], ARRAYS["b"]),
            {"target": "trn2", "kernel_name": None, "max_instructions": 10_000, "timeout": 30.0},
        ),
        "nki_sim.Simulator": (
            nki_sim.Simulator,
            (KERNEL,),
            {
                "target": "trn2",
                "kernel_name": None,
                "max_instructions": 10_000,
                "timeout": 30.0,
                "profile": False,
            },
        ),
    }


def _weights() -> dict[str, np.ndarray]:
    return {"w1": np.ones((64, 32)), "w2": np.ones((64, 64))}


EXCLUDED: dict[str, str] = {
    "backends": "takes no arguments",
    "get_plugin_manager": "takes no arguments",
    "transforms": "takes no arguments",
    "hookimpl": "pluggy's marker decorator, re-exported: it marks any function given",
    "node_keys": "the canonical hash's internals (statements, variables, edge maps), for plugins "
    "that compute keys of a program they already hold",
    "nki_sim": "a module; its public functions are swept as nki_sim.*",
}
"""Exported callables not swept, and why. Classes are excluded as a kind (see
``CLASSES_EXCLUDED``), except ``NetlistLimits``, ``Program`` and ``nki_sim.Simulator``."""

CLASSES_EXCLUDED = (
    "Exception classes take any message; value records (Analysis, Artifact, CostReport, "
    "Derivation, Edit, Match, Netlist, Operand, Param, Statement, ...) are named tuples or "
    "dataclasses built by the library, or by plugins from values it gave them, and are "
    "checked where they are used (Program(...) checks its Params, Statements and Operands; "
    "apply checks Matches); Backend, CostModel, Op and Transform are base classes."
)


def _matmul_shapes(shapes: dict[str, Any]) -> Any:
    return ng.tile(_matmul, shapes)


NESTED: dict[str, Callable[[Any], Any]] = {
    "interpret: an input array": lambda v: ng.interpret(ROOT, a=v, b=ARRAYS["b"]),
    "evaluate_netlist: an input": lambda v: ng.evaluate_netlist(NETLIST, {**NETLIST_INPUTS, "a": v}),
    "simulate: an input array": lambda v: nki_sim.simulate(KERNEL, v, ARRAYS["b"]),
    "profile: an input array": lambda v: nki_sim.profile(KERNEL, v, ARRAYS["b"]),
    "stitch_inputs: a weight": lambda v: ng.stitch_inputs(STITCHED_PROGRAM, {**_weights(), "w1": v}),
    "stitch_weights: a weight": lambda v: ng.stitch_weights([("w1", v), ("w2", np.ones((64, 64)))]),
    "stitch_weights: a name": lambda v: ng.stitch_weights(
        [(v, np.ones((64, 32))), ("w2", np.ones((64, 64)))]
    ),
    "unstitch: the array": lambda v: ng.unstitch(v, STITCH_META),
    "tile: a shape": lambda v: _matmul_shapes({"a": v, "b": (128, 128)}),
    "tile: a size": lambda v: _matmul_shapes({"a": (128, v), "b": (128, 128)}),
    "parse_program: a shape": lambda v: ng.parse_program(str(ROOT), {"a": v, "b": (128, 256)}),
    "parse_program: a dtype": lambda v: ng.parse_program(str(ROOT), dtype={"a": v}),
    "search: a transform": lambda v: ng.search(ROOT, [v], budget=2, confirm=False),
    "search: beam width": lambda v: ng.search(ROOT, budget=2, strategy="beam", width=v, confirm=False),
    "search: an option": lambda v: ng.search(ROOT, budget=2, confirm=False, bogus=v),
    "saturate: a transform": lambda v: ng.saturate(ROOT, [v]),
    "replay: a step": lambda v: ng.replay(ROOT, [v]),
    "check_netlist: ignore": lambda v: ng.check_netlist(NETLIST, ignore=[v]),
    "emit: an option": lambda v: ng.emit(ROOT, "nki", bogus=v),
    "tensor_tensor: y": lambda v: ng.tensor_tensor(X, v),
    "nc_matmul: rhs": lambda v: ng.nc_matmul(X, v),
}
"""Wrong values inside containers and in ``**options``: the same rule holds there."""
