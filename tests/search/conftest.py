"""Make sure the built-in ``trn2`` cost model is registered (through its entry point
once the package declares it; registered here at run time until then)."""

from __future__ import annotations

import nkigym_graph as ng
import nkigym_graph_plugins.trn2_cost as trn2_cost
from nkigym_graph.cost import cost_models

if "trn2" not in cost_models():
    ng.register_plugin(trn2_cost, name="trn2_cost")
