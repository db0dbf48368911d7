"""Circular-buffer accounting: how many CBs each kernel needs against the chip's limit.

A Tenstorrent kernel has a fixed number of circular buffers (``target.facts
["circular_buffer_limit"]``: 32 on Grayskull and Wormhole, 64 on Blackhole), and each
operand stream of a kernel takes one. :func:`circular_buffers` counts them for a Buda
netlist (one kernel per graph op, see :mod:`~nkigym_graph.stitching.cb_netlist`) or a
tiled program (one kernel, see :mod:`~nkigym_graph.stitching.cb_program`);
:func:`check_circular_buffers` raises :class:`CircularBufferError` when a kernel needs
more, suggesting weight stitching (seed 003: several matmuls' weights in one tensor take
one CB instead of one each).

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> count = circular_buffers(tiled_matmul(64, 64, 64, tile=32), "wormhole_b0")
>>> count.inputs, count.outputs, count.total, count.limit, count.fits
(2, 1, 3, 32, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nkigym_graph.buda.netlist import Netlist, load_netlist
from nkigym_graph.ir.arguments import require_type
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.targets import Target
from nkigym_graph.plugin.registry import get_target
from nkigym_graph.stitching.cb_count import (
    CircularBufferCount,
    CircularBufferError,
    KernelBuffers,
    circular_buffer_limit,
)
from nkigym_graph.stitching.cb_netlist import netlist_arch, netlist_kernels
from nkigym_graph.stitching.cb_program import program_kernel
from nkigym_graph.stitching.errors import StitchError

ProgramOrNetlist = Program | Netlist | Mapping[str, Any] | str | Path


def circular_buffers(
    netlist_or_program: ProgramOrNetlist, arch: Target | str | None = None
) -> CircularBufferCount:
    """Count the circular buffers ``netlist_or_program`` needs on ``arch``.

    It is a :class:`Program` or a netlist (a :class:`Netlist`, a parsed map, YAML text
    as a ``str`` or a file as a ``pathlib.Path``). ``arch`` defaults to the program's
    target, or the netlist's ``devices.arch``.
    """
    if isinstance(netlist_or_program, Program):
        target = get_target(arch) if arch is not None else netlist_or_program.target
        kernels: tuple[KernelBuffers, ...] = (program_kernel(netlist_or_program),)
    else:
        what = "a Program or a netlist (Netlist, parsed map, YAML text or pathlib.Path)"
        require_type(
            netlist_or_program, (str, Path, Mapping, Netlist), "netlist_or_program", StitchError, what
        )
        netlist = load_netlist(netlist_or_program)
        target = get_target(arch) if arch is not None else netlist_arch(netlist)
        kernels = tuple(netlist_kernels(netlist))
    return CircularBufferCount.of(kernels, circular_buffer_limit(target), target.name)


def check_circular_buffers(
    netlist_or_program: ProgramOrNetlist, arch: Target | str | None = None
) -> CircularBufferCount:
    """:func:`circular_buffers`, raising :class:`CircularBufferError` if a kernel is over the limit."""
    count = circular_buffers(netlist_or_program, arch)
    over = count.over_limit
    if over:
        worst = max(over, key=lambda k: k.total)
        others = [k.name for k in over if k is not worst]
        also = f" (also over: {', '.join(others)})" if others else ""
        raise CircularBufferError(
            f"kernel {worst.name!r} needs {worst.summary()} circular buffers, over the limit of "
            f"{count.limit} on {count.arch}{also}; {_suggestion(worst, count.limit)}"
        )
    return count


def _suggestion(kernel: KernelBuffers, limit: int) -> str:
    saved = kernel.stitch_savings
    if not saved:
        return (
            "stitching matmul weights into one tensor (the weight_stitch transform) frees one CB "
            "per extra weight, but this kernel has no two stitchable weights: split the kernel"
        )
    left = kernel.total - saved
    verdict = "which fits" if left <= limit else "still over: also split the kernel"
    groups = "; ".join(", ".join(group) for group in kernel.weight_groups)
    tensors = "one tensor" if len(kernel.weight_groups) == 1 else "one tensor per group"
    return (
        f"stitch its matmul weights ({groups}) into {tensors} with the weight_stitch transform "
        f"(or nkigym_graph.stitching.stitch_weights) to free {saved}, leaving {left}, {verdict}"
    )
