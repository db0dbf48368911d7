"""Architecture names in netlists and the targets that carry their facts.

``devices.arch`` uses ``grayskull``, ``wormhole`` (the pre-B0 part, checked with the
Wormhole B0 facts), ``wormhole_b0`` and ``blackhole``; case does not matter.
"""

from __future__ import annotations

from nkigym_graph.buda.errors import NetlistError
from nkigym_graph.ir.arguments import describe
from nkigym_graph.ir.targets import BLACKHOLE, GRAYSKULL, WORMHOLE_B0, Target

ARCH_TARGETS: dict[str, Target] = {
    "grayskull": GRAYSKULL,
    "wormhole": WORMHOLE_B0,
    "wormhole_b0": WORMHOLE_B0,
    "blackhole": BLACKHOLE,
}
DEFAULT_ARCH = "wormhole_b0"
"""Architecture checked when neither the caller nor the netlist names one."""


def arch_target(arch: str | Target) -> Target:
    """The Tenstorrent target for an architecture name (or a target passed through)."""
    if isinstance(arch, Target):
        if arch.family != "tenstorrent":
            raise NetlistError(f"target {arch.name} is not a Tenstorrent architecture")
        return arch
    if not isinstance(arch, str):
        known = ", ".join(ARCH_TARGETS)
        raise NetlistError(
            f"arch must be an architecture name ({known}) or a Tenstorrent Target, got {describe(arch)}"
        )
    if not is_known_arch(arch):
        raise NetlistError(f"unknown architecture '{arch}'; known: {', '.join(ARCH_TARGETS)}")
    return ARCH_TARGETS[arch.lower()]


def is_known_arch(name: str) -> bool:
    """Whether ``name`` is an architecture of :data:`ARCH_TARGETS` (in any case)."""
    return name.lower() in ARCH_TARGETS


def arch_name(arch: str | Target) -> str:
    """The canonical lower-case name of an architecture."""
    return arch.name if isinstance(arch, Target) else arch.lower()
