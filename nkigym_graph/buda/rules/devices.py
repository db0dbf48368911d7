"""The ``devices`` section: the architectures a netlist is for, and nothing else."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from nkigym_graph.buda.arch import ARCH_TARGETS, is_known_arch
from nkigym_graph.buda.context import Finding, NetlistContext
from nkigym_graph.buda.rules.registry import netlist_rule

_KNOWN = ", ".join(ARCH_TARGETS)


@netlist_rule("devices.arch", "devices.arch names architectures the backend knows")
def known_architectures(ctx: NetlistContext) -> Iterator[Finding]:
    """Backend parser (``parse_devices``, ``get_arch_from_string``): an architecture other
    than ``grayskull``, ``wormhole``, ``wormhole_b0`` and ``blackhole`` is an error ("is not
    recognized as tt::ARCH"), alone or in a list. So is an ``arch`` that names none: ``null``
    (read as the name "null") and ``[]`` (a list needs the ``ARCH_NAME`` of the run to be one
    of its names). The other rules check the architectures it does know (``wormhole_b0``
    when it knows none)."""
    devices = ctx.netlist.devices
    if "arch" in devices and devices["arch"] in (None, []):
        shown = "null" if devices["arch"] is None else "[]"
        yield Finding(f"devices.arch: arch is {shown}, which names no architecture; known: {_KNOWN}")
    for name in ctx.netlist.arch_names:
        if not is_known_arch(name):
            yield Finding(f"devices.arch: unknown architecture '{name}'; known: {_KNOWN}")


@netlist_rule("devices.fields", "devices is a map with one field, arch")
def only_arch(ctx: NetlistContext) -> Iterator[Finding]:
    """Backend parser (``parse_devices``): any field of ``devices`` other than ``arch`` is an
    error ("Field ... is not supported for tt_device_info settings"), and so is a
    ``devices`` section that is not a map of fields."""
    devices = ctx.netlist.data.get("devices")
    if devices is None:
        return
    if not isinstance(devices, Mapping):
        shown = "a list" if isinstance(devices, list) else f"{str(devices)[:40]!r}"
        yield Finding(f"devices must be a map with the field arch, got {shown}")
        return
    for field in devices:
        if field != "arch":
            yield Finding(f"devices: field '{field}' is not supported (the backend reads only arch)")
