"""The host side of an emitted netlist: what to write into its input queues, and where the
program's outputs are in its output queues.

Queues hold whole 32x32 tiles, so arrays are zero-padded on the way in and cropped on the
way out. A parameter the netlist reads transposed (the stationary operand of
``nc_matmul``) is written transposed; constant queues get their constant, saturated to
the finite range of the queue's data format.

>>> import numpy as np
>>> import nkigym_graph as ng
>>> from nkigym_graph_plugins.buda_backend import BudaBackend
>>> p = ng.tile(lambda a, b: ng.nc_matmul(a, b), {"a": (64, 32), "b": (64, 96)}, target=ng.WORMHOLE_B0)
>>> art = BudaBackend().emit(p, ng.WORMHOLE_B0)
>>> a, b = np.ones((64, 32)), np.ones((64, 96))
>>> sorted(netlist_inputs(art, {"a": a, "b": b}))
['a_t', 'b']
>>> float(run_netlist(art, {"a": a, "b": b})["output"][0, 0])
64.0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from nkigym_graph.buda import evaluate_netlist
from nkigym_graph.ir.arguments import describe
from nkigym_graph.plugin.protocols import Artifact

from .constants import constant_array
from .errors import BudaEmitError
from .shapes import TILE


def queue_shape(spec: Mapping[str, Any]) -> tuple[int, int]:
    """Element shape of a queue (``t == 1``)."""
    (gr, gc), (m, n), (r, c) = spec["grid_size"], spec["mblock"], spec["ublock"]
    return (gr * m * r * TILE, gc * n * c * TILE)


def _pad(array: np.ndarray, shape: tuple[int, int], name: str) -> np.ndarray:
    if array.ndim != 2 or array.shape[0] > shape[0] or array.shape[1] > shape[1]:
        raise BudaEmitError(f"queue {name!r} holds {shape}, cannot take an array of shape {array.shape}")
    out = np.zeros(shape)
    out[: array.shape[0], : array.shape[1]] = array
    return out


def _real_array(value: object, name: str) -> np.ndarray:
    """Input ``name`` as a float64 array; :class:`BudaEmitError` if it is not a real one."""
    try:
        array = np.asarray(value)
        if array.dtype.kind != "c":
            return array.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise BudaEmitError(f"input {name!r} is not a numeric array: {exc}") from None
    raise BudaEmitError(f"input {name!r} is complex ({array.dtype}); queues hold real numbers")


def netlist_inputs(artifact: Artifact, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Host queue contents for ``evaluate_netlist`` from the program's input arrays (a map
    of parameter name to real array; :class:`BudaEmitError` names a wrong one)."""
    if not isinstance(inputs, Mapping):
        raise BudaEmitError(f"inputs must be a map of parameter name to array, got {describe(inputs)}")
    params: Mapping[str, list[int]] = artifact.facts["params"]
    unknown = sorted(set(inputs) - set(params))
    missing = sorted(set(params) - set(inputs))
    if unknown or missing:
        raise BudaEmitError(
            f"inputs must be the program's parameters {sorted(params)}; "
            f"missing {missing}, unexpected {unknown}"
        )
    out: dict[str, np.ndarray] = {}
    for name, description in artifact.facts["host_queues"].items():
        shape = queue_shape(artifact.parsed["queues"][name])
        if "param" in description:
            array = _real_array(inputs[description["param"]], description["param"])
            expected = tuple(params[description["param"]])
            if array.shape != expected:
                raise BudaEmitError(
                    f"input {description['param']!r} has shape {array.shape}, expected {expected}"
                )
            out[name] = _pad(array.T if description["transposed"] else array, shape, name)
        else:
            out[name] = constant_array(description, shape, artifact.parsed["queues"][name]["df"])
    return out


def program_outputs(artifact: Artifact, results: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The program's outputs (cropped from the tile-padded output queues) by name."""
    out = {}
    for output, info in artifact.facts["outputs"].items():
        rows, cols = info["shape"]
        out[output] = np.asarray(results[info["queue"]])[:rows, :cols]
    return out


def run_netlist(artifact: Artifact, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Evaluate the emitted netlist in numpy on the program's inputs; outputs by name."""
    return program_outputs(artifact, evaluate_netlist(artifact.parsed, netlist_inputs(artifact, inputs)))
