"""The ``devices`` section: the architectures a netlist is for."""

from __future__ import annotations

from collections.abc import Iterator

from nkigym_graph.buda.arch import ARCH_TARGETS, is_known_arch
from nkigym_graph.buda.context import Finding, NetlistContext
from nkigym_graph.buda.rules.registry import netlist_rule


@netlist_rule("devices.arch", "devices.arch names architectures the backend knows")
def known_architectures(ctx: NetlistContext) -> Iterator[Finding]:
    """Backend parser (``parse_devices``, ``get_arch_from_string``): an architecture other
    than ``grayskull``, ``wormhole``, ``wormhole_b0`` and ``blackhole`` is an error ("is not
    recognized as tt::ARCH"), alone or in a list. The other rules check the architectures
    it does know (``wormhole_b0`` when it knows none)."""
    for name in ctx.netlist.arch_names:
        if not is_known_arch(name):
            yield Finding(f"devices.arch: unknown architecture '{name}'; known: {', '.join(ARCH_TARGETS)}")
