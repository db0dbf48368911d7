"""The NET2HLKS fused-op constraint checker: runs every rule of
:data:`nkigym_graph.buda.rules.RULES` and returns the violations.

Each violation has a severity (:mod:`nkigym_graph.buda.severity`): by default only
``error`` ones are returned (what the real backend rejects); ``strict=True`` adds
``warning`` ones (documented but checked by no backend code), ``min_severity="info"``
everything. A backend that emits netlists keeps to the stricter reading::

    violations = check_netlist(netlist_yaml, strict=True)
    if violations:
        raise SomeError("\n".join(str(v) for v in violations))
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path

from nkigym_graph.buda.arch import DEFAULT_ARCH, arch_name, arch_target, is_known_arch
from nkigym_graph.buda.context import Finding, FusedContext, NetlistContext
from nkigym_graph.buda.errors import NetlistError
from nkigym_graph.buda.limits import DEFAULT_LIMITS, NetlistLimits
from nkigym_graph.buda.model import FusedOp, NetlistOp
from nkigym_graph.buda.netlist import Netlist, NetlistSource, load_netlist
from nkigym_graph.buda.rules import RULES, Rule, rule_by_id
from nkigym_graph.buda.severity import Severity, at_least, check_severity
from nkigym_graph.buda.violation import Violation
from nkigym_graph.ir.arguments import describe
from nkigym_graph.ir.targets import Target


def _location(fused_op: str | None, schedule: int | None, sub_op: str | None, graph_op: str | None) -> str:
    parts = []
    if fused_op is not None:
        parts.append(f"fused op {fused_op}")
    if schedule is not None:
        parts.append(f"schedule {schedule}")
    if sub_op is not None:
        parts.append(f"sub-op '{sub_op}'")
    if graph_op is not None and fused_op is not None:
        parts.append(f"graph op '{graph_op}'")
    return ", ".join(parts)


def _violation(rule: Rule, finding: Finding, fused_op: str | None) -> Violation:
    fused = finding.fused_op if finding.fused_op is not None else fused_op
    where = _location(fused, finding.schedule, finding.sub_op, finding.graph_op)
    message = f"{where}: {finding.text}" if where else finding.text
    severity = finding.severity or rule.severity
    return Violation(rule.id, message, fused, finding.schedule, finding.sub_op, finding.graph_op, severity)


def _check_fused(
    netlist: Netlist, fused: FusedOp, target: Target, arch: str, rules: tuple[Rule, ...]
) -> Iterable[Violation]:
    instances: list[NetlistOp | None] = list(netlist.instances(fused.id)) or [None]
    for op in instances:
        ctx = FusedContext(netlist, fused, op, target, arch)
        for rule in rules:
            if rule.scope == "fused":
                for finding in rule.check(ctx):
                    yield _violation(rule, finding, fused.id)


def _check_arch(netlist: Netlist, arch: str | Target, rules: tuple[Rule, ...]) -> Iterable[Violation]:
    target, name = arch_target(arch), arch_name(arch)
    ctx = NetlistContext(netlist, target, name)
    for rule in rules:
        if rule.scope == "netlist":
            for finding in rule.check(ctx):
                yield _violation(rule, finding, None)
    for fused in netlist.fused_ops.values():
        yield from _check_fused(netlist, fused, target, name, rules)


def check_netlist(
    netlist: NetlistSource | Netlist | None = None,
    arch: str | Target | None = None,
    *,
    path: str | Path | None = None,
    ignore: Collection[str] = (),
    limits: NetlistLimits = DEFAULT_LIMITS,
    strict: bool = False,
    min_severity: Severity | None = None,
) -> list[Violation]:
    """Check a netlist against every rule in :data:`RULES`; an empty list means it passes.

    By default only ``error`` violations are returned (the real backend rejects them);
    ``strict=True`` returns ``warning`` ones too (documented but checked by no backend
    code); ``min_severity`` (``info``, ``warning`` or ``error``) sets the least severity
    returned, whatever ``strict`` says.

    ``netlist`` is YAML text (a ``str`` is always text), a file (``pathlib.Path``), a
    parsed map or a :class:`Netlist`; ``path=`` reads a file named by a ``str`` or ``Path``.
    ``arch`` (``grayskull``, ``wormhole``, ``wormhole_b0``, ``blackhole`` or a Tenstorrent
    :class:`~nkigym_graph.ir.targets.Target`) defaults to every architecture listed in the
    netlist's ``devices.arch`` (``wormhole_b0`` when none is listed): a netlist that claims
    several architectures must pass on each. A name there that is no architecture, or an
    ``arch`` of ``null`` or ``[]``, is the ``devices.arch`` violation (the rules then check
    the others, or ``wormhole_b0``); a ``devices`` field other than ``arch`` is
    ``devices.fields``.
    Violations are returned once each, in rule order per architecture. ``ignore`` names
    rules (ids or aliases) not to run. Raises :class:`NetlistError` if the netlist cannot be
    read or breaks ``limits`` (see :mod:`nkigym_graph.buda.limits`), and for an unknown
    ``arch`` argument or rule.
    """
    if isinstance(ignore, str) or not isinstance(ignore, Collection):
        raise NetlistError(f"ignore must be a list of rule ids, got {describe(ignore)}")
    if not isinstance(strict, bool):
        raise NetlistError(f"strict must be True or False, got {describe(strict)}")
    threshold = (
        check_severity(min_severity) if min_severity is not None else ("warning" if strict else "error")
    )
    skipped = {rule_by_id(rule_id).id for rule_id in ignore}
    rules = tuple(rule for rule in RULES if rule.id not in skipped)
    if arch is not None:
        arch_target(arch)  # an unknown architecture is refused before the netlist is read
    loaded = load_netlist(netlist, path=path, limits=limits)
    known: list[str | Target] = [name for name in loaded.arch_names if is_known_arch(name)]
    archs = [arch] if arch is not None else known or [DEFAULT_ARCH]  # unknown names: devices.arch
    seen: set[Violation] = set()
    found: list[Violation] = []
    for each in archs:
        for violation in _check_arch(loaded, each, rules):
            if at_least(violation.severity, threshold) and violation not in seen:
                seen.add(violation)
                found.append(violation)
    return found
