"""Cost models: ``estimate``, and the building blocks an analytic model uses (a list
scheduler over engine queues, liveness of on-chip tiles, tile dtypes). Concrete models
are plugins; the built-in one is ``trn2``. The protocol and the report are the plugin
layer's (``nkigym_graph.plugin.protocols.CostModel``,
``nkigym_graph.plugin.cost_report.CostReport``), re-exported here.

Every figure a cost model gives is modeled, not measured.
"""

from nkigym_graph.cost.dtypes import DEFAULT_DTYPE, dtype_of, tile_dtypes
from nkigym_graph.cost.errors import CostModelError
from nkigym_graph.cost.liveness import Interval, Peak, peak_live, peak_usage
from nkigym_graph.cost.models import DEFAULT_MODEL, cost_models, estimate, get_cost_model
from nkigym_graph.cost.schedule import Schedule, Task, list_schedule, node_schedule
from nkigym_graph.ir.dtypes import itemsize
from nkigym_graph.plugin.cost_report import CostReport
from nkigym_graph.plugin.protocols import CostModel

__all__ = [
    "DEFAULT_DTYPE",
    "DEFAULT_MODEL",
    "CostModel",
    "CostModelError",
    "CostReport",
    "Interval",
    "Peak",
    "Schedule",
    "Task",
    "cost_models",
    "dtype_of",
    "estimate",
    "get_cost_model",
    "itemsize",
    "list_schedule",
    "node_schedule",
    "peak_live",
    "peak_usage",
    "tile_dtypes",
]
