"""nkigym-graph: tile tensor programs for tile-constrained accelerators, rewrite them
with pluggable graph transforms, search for the best rewrite sequence, and emit NKI
kernels or Tenstorrent Buda netlists.

The IR is an immutable, verified DAG snapshot (``Program``) on networkx.
"""

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
from nkigym_graph.cost import CostModel, CostReport, estimate
from nkigym_graph.dot import FOLDS as DOT_FOLDS
from nkigym_graph.dot import to_dot, to_dot_diff, write_dot
from nkigym_graph.errors import (
    NkigymError,
    ParseError,
    PluginError,
    TilingError,
    TransformError,
    VerificationError,
)
from nkigym_graph.ir.canonical_hash import node_keys
from nkigym_graph.ir.derivation import Derivation
from nkigym_graph.ir.dtypes import DtypeError
from nkigym_graph.ir.ops import Op, get_op
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.ir.targets import BLACKHOLE, GRAYSKULL, TRN1, TRN2, WORMHOLE_B0, Target
from nkigym_graph.ir.variables import Param, Variable
from nkigym_graph.nki_sim import NKISimulationError, SimulationReport, Simulator
from nkigym_graph.numeric.interpreter import interpret
from nkigym_graph.plugin.backends import backends, emit, emit_artifact
from nkigym_graph.plugin.hookspecs import hookimpl
from nkigym_graph.plugin.manager import (
    get_plugin_manager,
    register_plugin,
    unregister_plugin,
)
from nkigym_graph.plugin.protocols import Artifact, Backend
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
from nkigym_graph.rewriting.analysis_cache import Analysis, LazyMatches, StableIds
from nkigym_graph.rewriting.transform import Edit, Match, Transform
from nkigym_graph.search import SearchError, SearchResult, replay, search
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
from nkigym_graph.text import parse_fragment, parse_program, read_program, write_program
from nkigym_graph.tiling import (
    OpCallError,
    StatementLimitError,
    TracedTensor,
    TracingError,
    activation,
    nc_matmul,
    nc_transpose,
    tensor_reduce,
    tensor_scalar,
    tensor_tensor,
    tile,
)

__version__ = "0.1.0"

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
    "CircularBufferCount",
    "CircularBufferError",
    "CostModel",
    "CostReport",
    "Derivation",
    "DtypeError",
    "Edit",
    "LazyMatches",
    "Match",
    "NKISimulationError",
    "Netlist",
    "NetlistError",
    "NetlistEvaluationError",
    "NetlistLimits",
    "NkigymError",
    "Op",
    "OpCallError",
    "Operand",
    "Param",
    "ParseError",
    "PluginError",
    "Program",
    "SearchError",
    "SearchResult",
    "SimulationReport",
    "Simulator",
    "StableIds",
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
    "Variable",
    "VerificationError",
    "Violation",
    "WeightSlot",
    "WeightSpec",
    "activation",
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
