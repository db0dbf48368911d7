"""``nkigym-graph profile KERNEL.py --shape ...``: time an NKI kernel on the engine model.

The kernel file is Python: like ``simulate``, it runs in a child process with CPU-time
and memory limits (``kernel_process``), so a bad kernel cannot take the command down.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from nkigym_graph.cli.inputs import (
    UsageError,
    existing_file,
    kernel_dtype,
    non_negative_int,
    output_file,
    parse_shapes,
)
from nkigym_graph.cli.kernel_process import add_limit_arguments, run_kernel
from nkigym_graph.cli.kernel_signature import shapes_for_kernel
from nkigym_graph.plugin.registry import get_target
from nkigym_graph.search.confirm import KERNEL_DTYPE_FOR
from nkigym_graph.text import read_program


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``profile`` command."""
    p = sub.add_parser(
        "profile",
        help="time an NKI kernel file (Python, in a limited child process) on the timing model",
        description="Run an NKI kernel in the simulator on random inputs and time its instruction "
        "stream on a model of one NeuronCore's engines and DMA queues. Prints total time, MFU, "
        "busy engines, DMA bandwidth, the critical resource and the top stalls.",
    )
    p.add_argument("kernel", metavar="KERNEL.py")
    p.add_argument("--shape", action="append", metavar="NAME=DIMxDIM", help="a parameter's shape (repeat)")
    p.add_argument(
        "--program",
        metavar="PROGRAM.nkg",
        help="the program the kernel was emitted from: each input gets its parameter's shape and dtype, "
        "and the target is the program's",
    )
    p.add_argument(
        "--dtype",
        type=kernel_dtype,
        help="every input's dtype: float32 (default without --program), bfloat16, float8_e4m3, ... "
        "or an alias (bf16, fp32, ...)",
    )
    p.add_argument("--target", help="trn2 (default without --program)")
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument(
        "--trace",
        type=output_file,
        metavar="OUT.json",
        help="write a Chrome / Perfetto trace (ui.perfetto.dev)",
    )
    p.add_argument(
        "--timeline",
        type=output_file,
        metavar="OUT.svg",
        help="draw a per-engine timeline (needs matplotlib)",
    )
    add_limit_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    kernel = existing_file(args.kernel)
    program = read_program(existing_file(args.program)) if args.program else None
    shapes = parse_shapes(args.shape)
    if program is not None:
        shapes = {p.name: tuple(p.shape) for p in program.params} | shapes
    if not shapes:
        raise UsageError(
            "give the kernel's input shapes with --shape NAME=DIMxDIM, one per parameter, or --program FILE"
        )
    shapes = shapes_for_kernel(kernel, shapes)
    rng = np.random.default_rng(args.seed)
    inputs = {name: rng.standard_normal(shape) for name, shape in shapes.items()}  # cast in the child
    kernel_dtypes = (
        {p.name: KERNEL_DTYPE_FOR.get(p.dtype, p.dtype) for p in program.params}
        if program is not None
        else {}
    )
    target = args.target or (program.target.name if program is not None else "trn2")
    job = {
        "mode": "profile",
        "dtypes": [args.dtype or kernel_dtypes.get(name, "float32") for name in inputs],
        "target": get_target(target).name,
        "trace": str(Path(args.trace).resolve()) if args.trace else None,
        "timeline": str(Path(args.timeline).resolve()) if args.timeline else None,
    }
    run = run_kernel(kernel, inputs, cpu_seconds=args.cpu_seconds, memory_mb=args.memory_mb, job=job)
    print(f"profiled {kernel}")
    print(run.report)
    return 0
