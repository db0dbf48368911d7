"""Tenstorrent Buda netlists: loading, the NET2HLKS fused-op constraint checker, and a
numpy evaluator.

- :func:`load_netlist` reads YAML text (a ``str``), a file (a ``Path`` or ``path=``) or a
  parsed map into a :class:`Netlist`, held to :class:`NetlistLimits`.
- :func:`check_netlist` returns the :class:`Violation` list (empty when the netlist is
  valid); :data:`RULES` lists every rule (``print(rules_table())``).
- :func:`evaluate_netlist` computes the output queues in numpy.
"""

from nkigym_graph.buda.checker import check_netlist
from nkigym_graph.buda.errors import NetlistError, NetlistEvaluationError
from nkigym_graph.buda.evaluator import evaluate_netlist
from nkigym_graph.buda.limits import DEFAULT_LIMITS, NetlistLimits
from nkigym_graph.buda.model import Dims, FusedOp, NetlistOp, Queue, SubOp
from nkigym_graph.buda.netlist import Netlist, load_netlist
from nkigym_graph.buda.rules import RULES, Rule, rule_by_id, rules_table
from nkigym_graph.buda.tms import Tm
from nkigym_graph.buda.violation import Violation

Op = NetlistOp
"""The former name of ``NetlistOp`` (kept working; the IR's op is ``nkigym_graph.Op``)."""

__all__ = [
    "DEFAULT_LIMITS",
    "RULES",
    "Dims",
    "FusedOp",
    "Netlist",
    "NetlistError",
    "NetlistEvaluationError",
    "NetlistLimits",
    "NetlistOp",
    "Op",
    "Queue",
    "Rule",
    "SubOp",
    "Tm",
    "Violation",
    "check_netlist",
    "evaluate_netlist",
    "load_netlist",
    "rule_by_id",
    "rules_table",
]
