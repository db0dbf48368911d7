"""All checker rules, in a printable registry, each with its severity, what enforces it
in the real backend and where (:mod:`nkigym_graph.buda.rules.enforcement`).

>>> from nkigym_graph.buda.rules import RULES, rule_by_id
>>> rule_by_id("matmul.15").id, rule_by_id("schedule.matmul_last").id
('matmul.12', 'general.7')
>>> print(rules_table().splitlines()[0])
general.1                    error    tile_broadcast only on input 1 of add/subtract/multiply
"""

from __future__ import annotations

from dataclasses import replace

from nkigym_graph.buda.errors import NetlistError

# Importing the rule modules registers their rules.
from nkigym_graph.buda.rules import (  # noqa: F401
    broadcast,
    devices,
    dims,
    formats,
    general,
    graph,
    int_ops,
    intermed,
    limits,
    matmul,
    names,
    queues,
    schedule,
    shapes,
    tms,
    unsupported,
)
from nkigym_graph.buda.rules.enforcement import ENFORCEMENT
from nkigym_graph.buda.rules.registry import Rule, fused_rule, netlist_rule, registered_rules

SECTION_ORDER = (
    "general", "unsupported", "matmul", "broadcast", "int", "dest", "schedule",
    "formats", "intermed", "dims", "names", "operands", "ops", "limits", "devices", "graph", "shapes",
    "tms", "queues",
)  # fmt: skip
"""Rule id prefixes in listing order: the seed's sections first, in the seed's order."""


def _listing_key(item: tuple[int, Rule]) -> tuple[int, int, int]:
    position, rule = item
    section, _, number = rule.id.partition(".")
    rank = SECTION_ORDER.index(section) if section in SECTION_ORDER else len(SECTION_ORDER)
    return rank, int(number) if number.isdigit() else 1000, position


def _with_enforcement(rule: Rule) -> Rule:
    if rule.id not in ENFORCEMENT:
        raise NetlistError(f"rule {rule.id} has no entry in the enforcement table", source="rules")
    severity, enforcement, backend_ref = ENFORCEMENT[rule.id]
    return replace(rule, severity=severity, enforcement=enforcement, backend_ref=backend_ref)


RULES: tuple[Rule, ...] = tuple(
    _with_enforcement(rule) for _, rule in sorted(enumerate(registered_rules()), key=_listing_key)
)
"""Every rule, seed rules first (general, unsupported, matmul, broadcast, int, by number),
then the rules the backend checks in code."""


def rule_by_id(rule_id: str) -> Rule:
    """The rule with this id or alias (``matmul.15`` is ``matmul.12``)."""
    for rule in RULES:
        if rule.id == rule_id or rule_id in rule.aliases:
            return rule
    raise NetlistError(f"no rule {rule_id!r}; rules_table() lists them", source="rules")


def rules_table(details: bool = False) -> str:
    """One line per rule: id, severity, summary, aliases; with ``details`` two more lines
    each: what enforces it in the real backend, and where (file and function, or commit)."""
    lines = []
    for rule in RULES:
        lines.append(str(rule))
        if details:
            lines.append(f"{'':<28} {'':<8} enforcement: {rule.enforcement}")
            lines.append(f"{'':<28} {'':<8} backend: {rule.backend_ref}")
    return "\n".join(lines)


__all__ = ["RULES", "Rule", "fused_rule", "netlist_rule", "rule_by_id", "rules_table"]
