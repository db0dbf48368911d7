"""nkigym-graph: tile tensor programs for tile-constrained accelerators, rewrite them
with pluggable graph transforms, search for the best rewrite sequence, and emit NKI
kernels or Tenstorrent Buda netlists.

The IR is an immutable, verified DAG snapshot (``Program``) on networkx.
"""

from nkigym_graph.canonical_hash import node_keys
from nkigym_graph.dot import to_dot, write_dot
from nkigym_graph.errors import (
    NkigymError,
    ParseError,
    PluginError,
    TilingError,
    TransformError,
    VerificationError,
)
from nkigym_graph.interpreter import interpret
from nkigym_graph.ops import Op, get_op
from nkigym_graph.program import Program
from nkigym_graph.statement import Operand, Statement
from nkigym_graph.targets import BLACKHOLE, GRAYSKULL, TRN1, TRN2, WORMHOLE_B0, Target, get_target
from nkigym_graph.text import parse_fragment, parse_program
from nkigym_graph.variables import Param, Variable

__version__ = "0.1.0"

__all__ = [
    "BLACKHOLE",
    "GRAYSKULL",
    "TRN1",
    "TRN2",
    "WORMHOLE_B0",
    "NkigymError",
    "Op",
    "Operand",
    "Param",
    "ParseError",
    "PluginError",
    "Program",
    "Statement",
    "Target",
    "TilingError",
    "TransformError",
    "Variable",
    "VerificationError",
    "get_op",
    "get_target",
    "interpret",
    "node_keys",
    "parse_fragment",
    "parse_program",
    "to_dot",
    "write_dot",
]
