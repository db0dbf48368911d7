"""A broken rule found by the netlist checker."""

from __future__ import annotations

from dataclasses import dataclass

from nkigym_graph.buda.severity import Severity


@dataclass(frozen=True)
class Violation:
    """One rule broken at one place.

    ``rule`` is the stable rule id (``general.2``, ``intermed.popped_at_end``, ...; see
    :data:`nkigym_graph.buda.rules.RULES`); ``message`` says what is wrong and names the
    fused op, schedule and sub-op. ``fused_op`` (id), ``schedule`` (index), ``sub_op``
    (name) and ``graph_op`` (name of the graph op, when the rule depends on it) locate it;
    each is None when it does not apply. ``severity`` says how sure it is that the real
    backend rejects it (:mod:`nkigym_graph.buda.severity`): ``error`` (it does),
    ``warning`` (documented, checked by no backend code) or ``info``.
    """

    rule: str
    message: str
    fused_op: str | None = None
    schedule: int | None = None
    sub_op: str | None = None
    graph_op: str | None = None
    severity: Severity = "error"

    def __str__(self) -> str:
        label = self.rule if self.severity == "error" else f"{self.rule}, {self.severity}"
        return f"[{label}] {self.message}"
