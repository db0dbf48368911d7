"""How sure a checker rule is that the real backend rejects what it reports.

- ``error``: the backend rejects it (an assert in its netlist parser, net2pipe or
  net2hlks);
- ``warning``: documented (``src/net2hlks/README.md``, seed 004) but checked by no backend
  code: the backend accepts it, and the kernel may or may not work;
- ``info``: retired upstream, or contradicted by netlists the backend's CI runs on silicon.

>>> at_least("error", "warning"), at_least("info", "warning")
(True, False)
"""

from __future__ import annotations

from typing import Literal

from nkigym_graph.buda.errors import NetlistError

Severity = Literal["info", "warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")
"""Least to most severe."""


def check_severity(value: object, what: str = "min_severity") -> Severity:
    """``value`` if it is a severity name, else a :class:`NetlistError` naming them."""
    for severity in SEVERITIES:
        if value == severity:
            return severity
    raise NetlistError(
        f"{what} must be one of {', '.join(SEVERITIES)}, got {value!r}", source="check_netlist"
    )


def at_least(severity: str, threshold: str) -> bool:
    """Whether ``severity`` is ``threshold`` or more severe."""
    return SEVERITIES.index(check_severity(severity, "severity")) >= SEVERITIES.index(
        check_severity(threshold, "threshold")
    )
