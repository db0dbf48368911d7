"""Finding cost models by name or by target, and ``estimate``.

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> from nkigym_graph_plugins.trn2_cost import Trn2CostModel
>>> report = estimate(tiled_matmul(256, 256, 256), Trn2CostModel())  # or model="trn2"
>>> 0 < report.mfu <= 1, report.feasible
(True, True)
>>> from nkigym_graph.ir.targets import WORMHOLE_B0
>>> model_for(WORMHOLE_B0).name, estimate(tiled_matmul(64, 64, 64, tile=32, target=WORMHOLE_B0)).model
('tenstorrent', 'tenstorrent')
"""

from __future__ import annotations

from collections.abc import Mapping

from nkigym_graph.cost.errors import CostModelError
from nkigym_graph.ir.arguments import require_type
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.targets import Target
from nkigym_graph.plugin.calls import estimate_with
from nkigym_graph.plugin.cost_report import CostReport
from nkigym_graph.plugin.protocols import CostModel
from nkigym_graph.plugin.registry import lookup, registered_cost_models

DEFAULT_MODEL = "trn2"
"""The model of NeuronCore programs (``model_for`` picks per target family)."""


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


def model_for(target: Target) -> CostModel:
    """The registered cost model that prices ``target``'s family (its ``families``)."""
    models = cost_models()
    for model in models.values():
        if target.family in getattr(model, "families", ()):
            return model
    priced = {family: name for name, model in models.items() for family in getattr(model, "families", ())}
    raise CostModelError(
        f"no registered cost model prices {target.name} ({target.family} targets); "
        f"models by family: {priced or 'none'}"
    )


def estimate(program: Program, model: str | CostModel | None = None) -> CostReport:
    """The modeled cost of ``program`` (modeled by an analytic model, not measured). The
    model defaults to the one for the program's target (``trn2`` for Trainium,
    ``tenstorrent`` for Grayskull, Wormhole B0 and Blackhole)."""
    require_type(program, Program, "program", CostModelError, "a Program (from tile or parse_program)")
    chosen = model_for(program.target) if model is None else get_cost_model(model)
    return estimate_with(chosen, program)
