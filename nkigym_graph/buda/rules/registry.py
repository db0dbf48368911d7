"""The rule registry: every rule is data (id, one-line summary, scope, check function).

A *fused* rule is called with a :class:`FusedContext` (one fused op on one architecture,
with the graph op running it when there is one; rules that need the graph op do nothing
without it). A *netlist* rule is called once per architecture with a
:class:`NetlistContext`. Check functions yield :class:`Finding` values; the checker adds
the rule id and the location to make a :class:`Violation`.

Seed rules that the seed states twice (matmul 15/16/17 repeat 12/13/14) are one rule
with the repeated ids as ``aliases``.

How sure each rule is (its ``severity``), what in the real backend enforces it
(``enforcement``) and where (``backend_ref``) come from one table,
:mod:`nkigym_graph.buda.rules.enforcement`, attached when :data:`RULES` is built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from nkigym_graph.buda.context import Finding
from nkigym_graph.buda.severity import Severity

Scope = Literal["fused", "netlist"]
CheckFunction = Callable[[Any], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """One checked rule. ``doc`` is the check function's docstring (the seed text it enforces).

    ``severity`` is the most severe level its findings get (a finding may carry a lower
    one, e.g. general.8's grid-[m, 1] part is ``info``, its broadcast part ``warning``);
    ``enforcement`` says which backend code rejects it, or why none does; ``backend_ref``
    names the file and function (or the upstream commit) it rests on.
    """

    id: str
    summary: str
    scope: Scope
    check: CheckFunction
    aliases: tuple[str, ...] = ()
    severity: Severity = "error"
    enforcement: str = ""
    backend_ref: str = ""

    @property
    def doc(self) -> str:
        return (self.check.__doc__ or "").strip()

    def __str__(self) -> str:
        also = f" (also {', '.join(self.aliases)})" if self.aliases else ""
        return f"{self.id:<28} {self.severity:<8} {self.summary}{also}"


_REGISTRY: list[Rule] = []


def _register(
    rule_id: str, summary: str, scope: Scope, aliases: tuple[str, ...]
) -> Callable[[CheckFunction], CheckFunction]:
    def decorate(check: CheckFunction) -> CheckFunction:
        if any(r.id == rule_id for r in _REGISTRY):
            raise ValueError(f"rule id {rule_id} registered twice")
        _REGISTRY.append(Rule(rule_id, summary, scope, check, aliases))
        return check

    return decorate


def fused_rule(
    rule_id: str, summary: str, aliases: tuple[str, ...] = ()
) -> Callable[[CheckFunction], CheckFunction]:
    """Register a check run on every fused op (and on every graph op running one)."""
    return _register(rule_id, summary, "fused", aliases)


def netlist_rule(rule_id: str, summary: str) -> Callable[[CheckFunction], CheckFunction]:
    """Register a check run once on the whole netlist."""
    return _register(rule_id, summary, "netlist", ())


def registered_rules() -> tuple[Rule, ...]:
    return tuple(_REGISTRY)
