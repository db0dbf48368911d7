"""Finding cost models by name and ``estimate``.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> from nkigym_graph_plugins.trn2_cost import Trn2CostModel
>>> report = estimate(tiled_matmul(256, 256, 256), Trn2CostModel())  # or model="trn2"
>>> 0 < report.mfu <= 1, report.feasible
(True, True)
"""

from __future__ import annotations

from collections.abc import Mapping

from nkigym_graph.cost.errors import CostModelError
from nkigym_graph.ir.arguments import require_type
from nkigym_graph.ir.program import Program
from nkigym_graph.plugin.cost_report import CostReport
from nkigym_graph.plugin.protocols import CostModel
from nkigym_graph.plugin.registry import lookup, registered_cost_models

DEFAULT_MODEL = "trn2"


def cost_models() -> Mapping[str, CostModel]:
    """Every registered cost model, by name."""
    return registered_cost_models()


def get_cost_model(model: str | CostModel) -> CostModel:
    """A cost model by name (or pass an instance through)."""
    if isinstance(model, str):
        return lookup("cost model", cost_models(), model)
    if not isinstance(model, CostModel):
        raise CostModelError(f"{model!r} is not a cost model: it needs a name and estimate(program)")
    return model


def estimate(program: Program, model: str | CostModel = DEFAULT_MODEL) -> CostReport:
    """The modeled cost of ``program`` (modeled by an analytic model, not measured)."""
    require_type(program, Program, "program", CostModelError, "a Program (from tile or parse_program)")
    chosen = get_cost_model(model)
    report = chosen.estimate(program)
    if not isinstance(report, CostReport):
        raise CostModelError(f"cost model {chosen.name!r} returned {type(report).__name__}, not a CostReport")
    return report
