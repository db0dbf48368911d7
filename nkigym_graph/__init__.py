"""nkigym-graph: tile tensor programs for tile-constrained accelerators, rewrite them
with pluggable graph transforms, search for the best rewrite sequence, and emit NKI
kernels or Tenstorrent Buda netlists.

The IR is an immutable, verified DAG snapshot (``Program``) on networkx.

Importing the package loads nothing else: each public name is imported from its module
on first use (PEP 562), so ``import nkigym_graph`` stays cheap while the simulator,
the netlist checker, networkx and pydot load only when something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers and editors
    from nkigym_graph import nki_sim
    from nkigym_graph.buda import (
        Netlist,
        NetlistError,
        NetlistEvaluationError,
        NetlistLimits,
        Violation,
        check_netlist,
        evaluate_netlist,
        load_netlist,
    )
    from nkigym_graph.cost.models import estimate
    from nkigym_graph.dot import FOLDS as DOT_FOLDS
    from nkigym_graph.dot import to_dot, to_dot_diff, write_dot
    from nkigym_graph.errors import (
        BatchFallbackWarning,
        NkigymError,
        ParseError,
        PluginError,
        SearchError,
        TilingError,
        TransformError,
        VerificationError,
    )
    from nkigym_graph.ir.canonical_hash import node_keys
    from nkigym_graph.ir.derivation import Derivation
    from nkigym_graph.ir.dtypes import DtypeError
    from nkigym_graph.ir.ops import Op, get_op
    from nkigym_graph.ir.program import Program
    from nkigym_graph.ir.schedule import Schedule, ScheduleError
    from nkigym_graph.ir.statement import Operand, Statement
    from nkigym_graph.ir.statement_ids import UnknownStatementError
    from nkigym_graph.ir.targets import BLACKHOLE, GRAYSKULL, TRN1, TRN2, WORMHOLE_B0, Target
    from nkigym_graph.ir.variables import Param, Variable
    from nkigym_graph.nki_sim import NKISimulationError, SimulationReport, Simulator
    from nkigym_graph.numeric.interpreter import interpret
    from nkigym_graph.plugin.backends import backends, emit, emit_artifact
    from nkigym_graph.plugin.cost_report import CostReport
    from nkigym_graph.plugin.hookspecs import hookimpl
    from nkigym_graph.plugin.manager import get_plugin_manager, register_plugin, unregister_plugin
    from nkigym_graph.plugin.protocols import Artifact, Backend, CostModel
    from nkigym_graph.plugin.registry import get_target
    from nkigym_graph.plugin.transforms import (
        analyze,
        apply,
        explain,
        get_transform,
        matches_of,
        saturate,
        saturate_steps,
        transforms,
    )
    from nkigym_graph.rewriting.analysis_cache import Analysis, LazyMatches
    from nkigym_graph.rewriting.patterns import EqualPattern, Found, Pattern, PatternTransform, SetPattern
    from nkigym_graph.rewriting.transform import Edit, Match, Rename, Transform
    from nkigym_graph.scheduling.choice import ScheduleTransform
    from nkigym_graph.scheduling.plan import KernelPlan, kernel_plan
    from nkigym_graph.search.confirm import NetlistConfirmation
    from nkigym_graph.search.replay import replay
    from nkigym_graph.search.result import SearchResult
    from nkigym_graph.search.run import search
    from nkigym_graph.stitching import (
        CircularBufferCount,
        CircularBufferError,
        StitchError,
        StitchMetadata,
        WeightSlot,
        WeightSpec,
        check_circular_buffers,
        circular_buffers,
        compile_time_args,
        find_weights,
        stitch_inputs,
        stitch_program,
        stitch_weights,
        stitching_of,
        unstitch,
    )
    from nkigym_graph.text.files import ProgramFileError, read_program, write_program
    from nkigym_graph.text.parser import parse_fragment, parse_program
    from nkigym_graph.tiling import (
        OpCallError,
        StatementLimitError,
        TracedTensor,
        TracingError,
        activation,
        affine_select,
        nc_matmul,
        nc_transpose,
        tensor_reduce,
        tensor_scalar,
        tensor_tensor,
        tile,
    )

__version__ = "0.1.0"

_HOMES: dict[str, tuple[str, ...]] = {
    "nkigym_graph.buda": (
        "Netlist",
        "NetlistError",
        "NetlistEvaluationError",
        "NetlistLimits",
        "Violation",
        "check_netlist",
        "evaluate_netlist",
        "load_netlist",
    ),
    "nkigym_graph.cost.models": ("estimate",),
    "nkigym_graph.dot": ("to_dot", "to_dot_diff", "write_dot"),
    "nkigym_graph.errors": (
        "BatchFallbackWarning",
        "NkigymError",
        "ParseError",
        "PluginError",
        "SearchError",
        "TilingError",
        "TransformError",
        "VerificationError",
    ),
    "nkigym_graph.ir.canonical_hash": ("node_keys",),
    "nkigym_graph.ir.derivation": ("Derivation",),
    "nkigym_graph.ir.dtypes": ("DtypeError",),
    "nkigym_graph.ir.ops": ("Op", "get_op"),
    "nkigym_graph.ir.program": ("Program",),
    "nkigym_graph.ir.schedule": ("Schedule", "ScheduleError"),
    "nkigym_graph.ir.statement": ("Operand", "Statement"),
    "nkigym_graph.ir.statement_ids": ("UnknownStatementError",),
    "nkigym_graph.ir.targets": ("BLACKHOLE", "GRAYSKULL", "TRN1", "TRN2", "WORMHOLE_B0", "Target"),
    "nkigym_graph.ir.variables": ("Param", "Variable"),
    "nkigym_graph.nki_sim": ("NKISimulationError", "SimulationReport", "Simulator"),
    "nkigym_graph.numeric.interpreter": ("interpret",),
    "nkigym_graph.plugin.backends": ("backends", "emit", "emit_artifact"),
    "nkigym_graph.plugin.cost_report": ("CostReport",),
    "nkigym_graph.plugin.hookspecs": ("hookimpl",),
    "nkigym_graph.plugin.manager": ("get_plugin_manager", "register_plugin", "unregister_plugin"),
    "nkigym_graph.plugin.protocols": ("Artifact", "Backend", "CostModel"),
    "nkigym_graph.plugin.registry": ("get_target",),
    "nkigym_graph.plugin.transforms": (
        "analyze",
        "apply",
        "explain",
        "get_transform",
        "matches_of",
        "saturate",
        "saturate_steps",
        "transforms",
    ),
    "nkigym_graph.rewriting.analysis_cache": ("Analysis", "LazyMatches"),
    "nkigym_graph.rewriting.patterns": ("EqualPattern", "Found", "Pattern", "PatternTransform", "SetPattern"),
    "nkigym_graph.rewriting.transform": ("Edit", "Match", "Rename", "Transform"),
    "nkigym_graph.scheduling.choice": ("ScheduleTransform",),
    "nkigym_graph.scheduling.plan": ("KernelPlan", "kernel_plan"),
    "nkigym_graph.search.confirm": ("NetlistConfirmation",),
    "nkigym_graph.search.replay": ("replay",),
    "nkigym_graph.search.result": ("SearchResult",),
    "nkigym_graph.stitching": (
        "CircularBufferCount",
        "CircularBufferError",
        "StitchError",
        "StitchMetadata",
        "WeightSlot",
        "WeightSpec",
        "check_circular_buffers",
        "circular_buffers",
        "compile_time_args",
        "find_weights",
        "stitch_inputs",
        "stitch_program",
        "stitch_weights",
        "stitching_of",
        "unstitch",
    ),
    "nkigym_graph.text.files": ("ProgramFileError", "read_program", "write_program"),
    "nkigym_graph.text.parser": ("parse_fragment", "parse_program"),
    "nkigym_graph.tiling": (
        "OpCallError",
        "StatementLimitError",
        "TracedTensor",
        "TracingError",
        "activation",
        "affine_select",
        "nc_matmul",
        "nc_transpose",
        "tensor_reduce",
        "tensor_scalar",
        "tensor_tensor",
        "tile",
    ),
}
"""Each public name by the module that provides it."""

_WHERE: dict[str, tuple[str, str | None]] = {
    **{name: (module, name) for module, names in _HOMES.items() for name in names},
    "DOT_FOLDS": ("nkigym_graph.dot", "FOLDS"),
    "nki_sim": ("nkigym_graph.nki_sim", None),
    "search": ("nkigym_graph.search", None),
}
"""Public name -> (module, attribute); no attribute: the name is the module itself
(``search`` is the search package, which is called as the search function)."""


def __getattr__(name: str) -> Any:
    found = _WHERE.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, attribute = found
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "BLACKHOLE",
    "DOT_FOLDS",
    "GRAYSKULL",
    "TRN1",
    "TRN2",
    "WORMHOLE_B0",
    "Analysis",
    "Artifact",
    "Backend",
    "BatchFallbackWarning",
    "CircularBufferCount",
    "CircularBufferError",
    "CostModel",
    "CostReport",
    "Derivation",
    "DtypeError",
    "Edit",
    "EqualPattern",
    "Found",
    "KernelPlan",
    "LazyMatches",
    "Match",
    "NKISimulationError",
    "Netlist",
    "NetlistConfirmation",
    "NetlistError",
    "NetlistEvaluationError",
    "NetlistLimits",
    "NkigymError",
    "Op",
    "OpCallError",
    "Operand",
    "Param",
    "ParseError",
    "Pattern",
    "PatternTransform",
    "PluginError",
    "Program",
    "ProgramFileError",
    "Rename",
    "Schedule",
    "ScheduleError",
    "ScheduleTransform",
    "SearchError",
    "SearchResult",
    "SetPattern",
    "SimulationReport",
    "Simulator",
    "Statement",
    "StatementLimitError",
    "StitchError",
    "StitchMetadata",
    "Target",
    "TilingError",
    "TracedTensor",
    "TracingError",
    "Transform",
    "TransformError",
    "UnknownStatementError",
    "Variable",
    "VerificationError",
    "Violation",
    "WeightSlot",
    "WeightSpec",
    "activation",
    "affine_select",
    "analyze",
    "apply",
    "backends",
    "check_circular_buffers",
    "check_netlist",
    "circular_buffers",
    "compile_time_args",
    "emit",
    "emit_artifact",
    "estimate",
    "evaluate_netlist",
    "explain",
    "find_weights",
    "get_op",
    "get_plugin_manager",
    "get_target",
    "get_transform",
    "hookimpl",
    "interpret",
    "kernel_plan",
    "load_netlist",
    "matches_of",
    "nc_matmul",
    "nc_transpose",
    "nki_sim",
    "node_keys",
    "parse_fragment",
    "parse_program",
    "read_program",
    "register_plugin",
    "replay",
    "saturate",
    "saturate_steps",
    "search",
    "stitch_inputs",
    "stitch_program",
    "stitch_weights",
    "stitching_of",
    "tensor_reduce",
    "tensor_scalar",
    "tensor_tensor",
    "tile",
    "to_dot",
    "to_dot_diff",
    "transforms",
    "unregister_plugin",
    "unstitch",
    "write_dot",
    "write_program",
]
