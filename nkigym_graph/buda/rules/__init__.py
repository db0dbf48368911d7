"""All checker rules, in a printable registry.

>>> from nkigym_graph.buda.rules import RULES, rule_by_id
>>> rule_by_id("matmul.15").id
'matmul.12'
>>> print(rules_table().splitlines()[0])
general.1                    tile_broadcast only on input 1 of add/subtract/multiply
"""

from __future__ import annotations

from nkigym_graph.buda.errors import NetlistError

# Importing the rule modules registers their rules.
from nkigym_graph.buda.rules import (  # noqa: F401
    broadcast,
    dims,
    general,
    graph,
    int_ops,
    intermed,
    limits,
    matmul,
    names,
    queues,
    schedule,
    unsupported,
)
from nkigym_graph.buda.rules.registry import Rule, fused_rule, netlist_rule, registered_rules

SECTION_ORDER = (
    "general", "unsupported", "matmul", "broadcast", "int",
    "dest", "schedule", "intermed", "dims", "names", "operands", "ops", "limits", "graph", "queues",
)  # fmt: skip
"""Rule id prefixes in listing order: the seed's sections first, in the seed's order."""


def _listing_key(item: tuple[int, Rule]) -> tuple[int, int, int]:
    position, rule = item
    section, _, number = rule.id.partition(".")
    rank = SECTION_ORDER.index(section) if section in SECTION_ORDER else len(SECTION_ORDER)
    return rank, int(number) if number.isdigit() else 1000, position


RULES: tuple[Rule, ...] = tuple(rule for _, rule in sorted(enumerate(registered_rules()), key=_listing_key))
"""Every rule, seed rules first (general, unsupported, matmul, broadcast, int, by number),
then the rules the backend checks in code."""


def rule_by_id(rule_id: str) -> Rule:
    """The rule with this id or alias (``matmul.15`` is ``matmul.12``)."""
    for rule in RULES:
        if rule.id == rule_id or rule_id in rule.aliases:
            return rule
    raise NetlistError(f"no rule {rule_id!r}; rules_table() lists them", source="rules")


def rules_table() -> str:
    """One line per rule: id, summary, aliases."""
    return "\n".join(str(rule) for rule in RULES)


__all__ = ["RULES", "Rule", "fused_rule", "netlist_rule", "rule_by_id", "rules_table"]
