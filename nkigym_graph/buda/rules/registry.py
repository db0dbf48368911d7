"""The rule registry: every rule is data (id, one-line summary, scope, check function).

A *fused* rule is called with a :class:`FusedContext` (one fused op on one architecture,
with the graph op running it when there is one; rules that need the graph op do nothing
without it). A *netlist* rule is called once per architecture with a
:class:`NetlistContext`. Check functions yield :class:`Finding` values; the checker adds
the rule id and the location to make a :class:`Violation`.

Seed rules that the seed states twice (matmul 15/16/17 repeat 12/13/14) are one rule
with the repeated ids as ``aliases``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from nkigym_graph.buda.context import Finding

Scope = Literal["fused", "netlist"]
CheckFunction = Callable[[Any], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """One checked rule. ``doc`` is the check function's docstring (the seed text it enforces)."""

    id: str
    summary: str
    scope: Scope
    check: CheckFunction
    aliases: tuple[str, ...] = ()

    @property
    def doc(self) -> str:
        return (self.check.__doc__ or "").strip()

    def __str__(self) -> str:
        also = f" (also {', '.join(self.aliases)})" if self.aliases else ""
        return f"{self.id:<28} {self.summary}{also}"


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
