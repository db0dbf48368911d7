"""The one exception the NKI simulator raises on purpose."""

from __future__ import annotations

from nkigym_graph.errors import NkigymError


class NKISimulationError(NkigymError):
    """A kernel that breaks an NKI rule, or that fails while it runs.

    ``instruction`` is the API call that failed (``"nisa.nc_matmul"``, ``"nl.ndarray"``,
    ``"kernel"`` for plain Python code), ``line`` the 1-based line in the kernel source
    (0 when unknown), ``rule`` a stable id from :mod:`nkigym_graph.nki_sim.rules` and
    ``detail`` the message without the location prefix.
    """

    def __init__(self, rule: str, detail: str, instruction: str = "kernel", line: int = 0) -> None:
        self.rule = rule
        self.detail = detail
        self.instruction = instruction
        self.line = line
        where = f"line {line}" if line else "line ?"
        super().__init__(f"{instruction} ({where}) [{rule}]: {detail}")
